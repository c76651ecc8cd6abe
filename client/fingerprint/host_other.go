//go:build !linux && !darwin

package fingerprint

import "errors"

func statfs(string) (int64, int64, error) { return 0, 0, errors.New("statfs not supported") }
