//go:build e2e && e2ecluster

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The nemesis's disk and snapshot faults, and the end-of-run health check.

// fillDisk allocates one file over all the space left on h's data_dir tmpfs: the server must
// refuse writes it cannot store (507), keep what it acknowledged, and recover by itself once
// freeDisk removes the file.
func (jc *jepsenCluster) fillDisk(h *labHost) error {
	dir := jc.dataDirs[h.name]
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return err
	}
	path := filepath.Join(dir, "jepsen-filler")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	jc.mu.Lock()
	jc.fillers[h.name] = path
	jc.mu.Unlock()
	// Whole, then in 1 MiB steps: the server writes between the statfs and the fallocate, so
	// asking for every free byte at once can itself fail for lack of space.
	free := int64(st.Bavail * uint64(st.Bsize))
	if free > 0 && unix.Fallocate(int(f.Fd()), 0, 0, free) == nil {
		return nil
	}
	const step = 1 << 20
	for off := int64(0); ; off += step {
		err := unix.Fallocate(int(f.Fd()), 0, off, step)
		if errors.Is(err, unix.ENOSPC) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("filling %s: %w", dir, err)
		}
	}
}

func (jc *jepsenCluster) freeDisk(h *labHost) error {
	jc.mu.Lock()
	path := jc.fillers[h.name]
	delete(jc.fillers, h.name)
	jc.mu.Unlock()
	if path == "" {
		return nil
	}
	return os.Remove(path)
}

// logOffset is how far h's log has been written; waitLog looks for a line after it.
func (jc *jepsenCluster) logOffset(h *labHost) int64 {
	st, err := jc.logs[h.name].Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

// waitLog polls h's log from offset until a line holds want (true) or limit passes. Polling
// every few milliseconds keeps the kill that follows close to the moment the line was written.
func (jc *jepsenCluster) waitLog(h *labHost, offset int64, want string, limit time.Duration) bool {
	return jc.waitLogCount(h, offset, want, 1, limit)
}

// waitLogCount is waitLog for n lines.
func (jc *jepsenCluster) waitLogCount(h *labHost, offset int64, want string, n int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if strings.Count(jc.logSince(h, offset), want) >= n {
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return false
}

func (jc *jepsenCluster) logSince(h *labHost, offset int64) string {
	buf, err := os.ReadFile(jc.logs[h.name].Name())
	if err != nil || int64(len(buf)) < offset {
		return ""
	}
	return string(buf[offset:])
}

// The lines hashicorp/raft writes around snapshots: its own (every server) and one sent by
// the leader (a follower too far behind the leader's log).
const (
	logSnapshotStart    = "starting snapshot up to"
	logSnapshotDone     = "snapshot complete up to"
	logInstallReceived  = "copied to local snapshot"
	logInstallCompleted = "Installed remote snapshot"
)

// killMidSnapshot waits (up to 4 s) for h to start a snapshot and kills it -9 at once; mid
// says whether the snapshot had not completed by then.
func (jc *jepsenCluster) killMidSnapshot(h *labHost) (seen, mid bool) {
	off := jc.logOffset(h)
	seen = jc.waitLog(h, off, logSnapshotStart, 4*time.Second)
	jc.kill(h)
	if !seen {
		return false, false
	}
	rest := jc.logSince(h, off)
	i := strings.Index(rest, logSnapshotStart)
	return true, !strings.Contains(rest[i:], logSnapshotDone)
}

// killDuringInstall restarts h once the leader (l, whose log was at lOff when h went down)
// has completed two snapshots since: the second is at least raft_snapshot_threshold entries
// past the first, so the log it keeps (raft_trailing_logs, fewer) no longer holds what h
// lacks, and the leader must send h a snapshot. h is killed -9 as soon as it has received it
// (while it restores it into its state), then started again, and must catch up once more.
// The leader retries an unreachable follower with a backoff of up to ~10 s, hence the wait.
func (jc *jepsenCluster) killDuringInstall(h, l *labHost, lOff int64) (received, mid bool, err error) {
	if l != nil {
		jc.waitLogCount(l, lOff, logSnapshotDone, 2, 10*time.Second)
	}
	off := jc.logOffset(h)
	if err := jc.start(h); err != nil {
		return false, false, err
	}
	received = jc.waitLog(h, off, logInstallReceived, 15*time.Second)
	if received {
		jc.kill(h)
		rest := jc.logSince(h, off)
		mid = !strings.Contains(rest[strings.Index(rest, logInstallReceived):], logInstallCompleted)
		return received, mid, jc.start(h)
	}
	return false, false, nil
}

// countLogs counts the lines holding want in every server's log.
func (jc *jepsenCluster) countLogs(want string) int {
	n := 0
	for _, h := range jc.servers {
		n += strings.Count(jc.logSince(h, 0), want)
	}
	return n
}

// waitHealthy waits for autopilot to call every server healthy (alive, in contact with the
// leader, on its term, close behind its log): the server whose disk filled, and those killed
// while they snapshotted, caught up by themselves.
func (jc *jepsenCluster) waitHealthy(deadline time.Time) error {
	var last string
	for {
		var health struct {
			Healthy bool
			Servers []struct {
				Name      string
				Healthy   bool
				LastIndex uint64
			}
		}
		l := jc.leader()
		if l != nil {
			err := jc.getJSON(l, "/v1/operator/autopilot/health", &health)
			if err == nil && health.Healthy && len(health.Servers) == len(jc.servers) {
				return nil
			}
			last = fmt.Sprintf("%v %+v", err, health.Servers)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after healing, the servers were not all healthy in time: %s", last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
