package execdriver

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"golang.org/x/sys/unix"
)

// TestReadConfigFD_ClosesOnce: once the configuration is read, its descriptor's number may be
// given to the next pipe the process opens, and no later garbage collection may close that
// pipe. (Closing the number behind its *os.File's back did: the File's finalizer closed the
// number again, which by then was the init's configuration pipe, and the task failed to
// start with "broken pipe" a few times in a hundred.)
func TestReadConfigFD_ClosesOnce(t *testing.T) {
	for range 20 {
		r, w, err := os.Pipe()
		must.NoError(t, err)
		_, err = w.WriteString(`{"Root":"/x"}`)
		must.NoError(t, err)
		must.NoError(t, w.Close())
		fd, err := syscall.Dup(int(r.Fd()))
		must.NoError(t, err)
		must.NoError(t, r.Close())

		raw, err := readConfigFD(uintptr(fd), "test-config")
		must.NoError(t, err)
		must.Eq(t, `{"Root":"/x"}`, string(raw))

		nextR, nextW, err := os.Pipe()
		must.NoError(t, err)
		for range 3 {
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
		for _, f := range []*os.File{nextR, nextW} {
			_, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
			must.NoError(t, err, must.Sprintf("descriptor %d was closed by someone else", f.Fd()))
		}
		_ = nextR.Close()
		_ = nextW.Close()
	}
}
