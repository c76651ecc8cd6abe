package dockertest

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/shoenig/test/must"
)

// recordingTB records how a helper ends the test instead of ending it.
type recordingTB struct {
	testing.TB
	mu      sync.Mutex
	outcome string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.end("fatal: " + fmt.Sprintf(format, args...))
}

func (r *recordingTB) Skipf(format string, args ...any) {
	r.end("skip: " + fmt.Sprintf(format, args...))
}

func (r *recordingTB) end(s string) {
	r.mu.Lock()
	r.outcome = s
	r.mu.Unlock()
	runtime.Goexit()
}

// Where docker tests are required, a missing registry binary fails them: a skipped pull test
// would prove nothing.
func TestStartRegistry_MissingBinary(t *testing.T) {
	cases := []struct {
		name       string
		required   string
		wantPrefix string
	}{
		{name: "required fails", required: "1", wantPrefix: "fatal: docker-registry not found"},
		{name: "optional skips", required: "", wantPrefix: "skip: docker-registry not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			t.Setenv("CI", "")
			t.Setenv("NOMAD_TEST_DOCKER", tc.required)
			rec := &recordingTB{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				StartRegistry(rec, RegistryOptions{})
			}()
			<-done
			rec.mu.Lock()
			defer rec.mu.Unlock()
			must.StrHasPrefix(t, tc.wantPrefix, rec.outcome)
		})
	}
}
