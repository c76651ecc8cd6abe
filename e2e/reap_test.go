//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var dataDirLine = regexp.MustCompile(`(?m)^\s*data_dir\s*=\s*"([^"]+)"`)

// reapTasks kills what an agent's tasks left running once the agent is gone: tasks outlive
// their agent by design, and a sleep left behind keeps its shim writing into a data dir the
// test is about to remove (and holds ports and CPU for the tests after). A process is the
// agent's when its working directory, or the raw_exec shim's exit file, lies in the data dir.
func reapTasks(configPath string) {
	raw, err := os.ReadFile(configPath)
	if err != nil {
		return
	}
	m := dataDirLine.FindSubmatch(raw)
	if m == nil {
		return
	}
	dataDir := filepath.Clean(string(m[1])) + string(filepath.Separator)
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := processesUnder(dataDir)
		if len(pids) == 0 || time.Now().After(deadline) {
			return
		}
		for _, pid := range pids {
			if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func processesUnder(dataDir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		proc := filepath.Join("/proc", e.Name())
		if stat, err := os.ReadFile(filepath.Join(proc, "stat")); err == nil {
			// A zombie holds nothing; its parent reaps it.
			if end := bytes.LastIndexByte(stat, ')'); end > 0 && end+2 < len(stat) && stat[end+2] == 'Z' {
				continue
			}
		}
		cwd, _ := os.Readlink(filepath.Join(proc, "cwd"))
		env, _ := os.ReadFile(filepath.Join(proc, "environ"))
		if strings.HasPrefix(cwd+string(filepath.Separator), dataDir) ||
			bytes.Contains(env, []byte("NOMADFORK_RAW_EXEC_EXIT_FILE="+dataDir)) {
			pids = append(pids, pid)
		}
	}
	return pids
}
