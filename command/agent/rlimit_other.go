//go:build !unix

package agent

import "github.com/hashicorp/go-hclog"

// logFileLimit does nothing where there is no RLIMIT_NOFILE.
func logFileLimit(hclog.Logger) {}
