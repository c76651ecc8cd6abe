//go:build !linux && !darwin

package client

import (
	"errors"

	"github.com/hashicorp/nomad/api"
)

func diskStats(string) (*api.HostDiskStats, error) {
	return nil, errors.New("file system stats are not supported on this platform")
}
