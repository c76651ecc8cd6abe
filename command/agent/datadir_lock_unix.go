//go:build unix

package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dataDirLockFile is the file in data_dir an agent holds an exclusive lock on while it runs.
const dataDirLockFile = "agent.lock"

// errDataDirInUse is what a second agent on the same data_dir fails with.
var errDataDirInUse = errors.New("data_dir is in use by another agent")

// lockDataDir takes the agent's lock on dir before anything in it is opened. Without it a
// second agent on the same data_dir waited, silently and for ever, on the lock raft-wal's
// metadata DB takes, and its SIGTERM handling had not started yet. The lock is a flock, so
// the kernel drops it when the holder exits however it exits; the file is never removed,
// since removing it would let two agents lock two different files. It holds the holder's
// pid, for the error only.
func lockDataDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data_dir: %w", err)
	}
	path := filepath.Join(dir, dataDirLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the data_dir lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := ""
		if raw, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(raw))); perr == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
		}
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w%s: %s is locked; stop that agent or give this one another data_dir", errDataDirInUse, holder, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
