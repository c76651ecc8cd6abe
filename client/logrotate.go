package client

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Log rotation (a task's `logs` block). A task writes its output straight into
// alloc/logs/<task>.<stdout|stderr>.0 through descriptors it holds itself, so that the output
// survives the agent; the agent cannot move those descriptors to a new file. It rotates by
// copy and truncate instead: once the live file passes max_file_size it is copied to the next
// archive, <task>.<type>.<n> (n from 1, higher is newer), and truncated, and the oldest
// archives go so that at most max_files files remain, the live one included. What the task
// writes between the copy and the truncation is lost: the price of output that outlives the
// agent.

// logRotateInterval is how often the live log files are checked.
const logRotateInterval = time.Second

// Upstream's defaults for a task without a logs block.
const (
	defaultLogMaxFiles  = 10
	defaultLogMaxFileMB = 10
)

// logLimits are a task's logs block with the defaults filled in.
type logLimits struct {
	maxFiles int
	maxSize  int64
}

func taskLogLimits(lc *api.LogConfig) logLimits {
	l := logLimits{maxFiles: defaultLogMaxFiles, maxSize: defaultLogMaxFileMB << 20}
	if lc == nil {
		return l
	}
	if lc.MaxFiles != nil && *lc.MaxFiles > 0 {
		l.maxFiles = *lc.MaxFiles
	}
	if lc.MaxFileSizeMB != nil && *lc.MaxFileSizeMB > 0 {
		l.maxSize = int64(*lc.MaxFileSizeMB) << 20
	}
	return l
}

// rotateLogs checks both logs of the task every logRotateInterval until stop closes. Its
// goroutine belongs to the task runner, which waits for it.
func rotateLogs(logsDir, task string, limits logLimits, stop <-chan struct{}, onError func(error)) {
	t := time.NewTicker(logRotateInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for _, typ := range []string{"stdout", "stderr"} {
			if err := rotateLog(logsDir, task+"."+typ, limits); err != nil {
				onError(err)
			}
		}
	}
}

// rotateLog rotates <base>.0 in logsDir when it has grown past the limit. Every file is
// opened through an os.Root of logsDir: the task can write there, and a link it left in place
// of a log must not make the agent read, truncate or remove a file elsewhere.
func rotateLog(logsDir, base string, limits logLimits) error {
	root, err := os.OpenRoot(logsDir)
	if err != nil {
		return err
	}
	defer root.Close()
	live, err := root.OpenFile(base+".0", os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s.0: %w", base, err)
	}
	defer live.Close()
	info, err := live.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() || info.Size() < limits.maxSize {
		return nil
	}
	// Readers (log_reader.go) must see the copy and the truncation as one step.
	lock := logLock(logsDir, base)
	lock.Lock()
	defer lock.Unlock()
	archives, err := logArchives(root, base)
	if err != nil {
		return err
	}
	if limits.maxFiles > 1 {
		next := 1
		if len(archives) > 0 {
			next = archives[len(archives)-1] + 1
		}
		if err := copyToArchive(root, live, base, next); err != nil {
			return err
		}
		archives = append(archives, next)
	}
	if err := live.Truncate(0); err != nil {
		return fmt.Errorf("truncating %s.0: %w", base, err)
	}
	for len(archives) > limits.maxFiles-1 {
		if err := root.Remove(base + "." + strconv.Itoa(archives[0])); err != nil && !os.IsNotExist(err) {
			return err
		}
		archives = archives[1:]
	}
	return nil
}

// copyToArchive copies the live file whole to <base>.<n>, through a temporary name so that
// a reader never sees a partial archive.
func copyToArchive(root *os.Root, live *os.File, base string, n int) error {
	tmp := base + ".rotating"
	out, err := root.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.NewSectionReader(live, 0, 1<<62))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("archiving %s.0: %w", base, err)
	}
	return root.Rename(tmp, base+"."+strconv.Itoa(n))
}

// logArchives are the indexes (1 and up) of <base>.<n> files, oldest first.
func logArchives(root *os.Root, base string) ([]int, error) {
	dir, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, base+".")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil && n > 0 && strconv.Itoa(n) == rest {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}
