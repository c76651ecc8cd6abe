package structs

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// Every sentinel declared in errors.go has a wire kind: one added without a row would
// cross RPC as bare text and errors.Is would stop matching after a forward.
func TestErrorKinds_EverySentinelHasAKind(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "errors.go", nil, 0)
	must.NoError(t, err)
	kinds := map[string]bool{}
	for _, k := range errorKinds {
		must.False(t, kinds[k.kind], must.Sprintf("kind %q twice", k.kind))
		kinds[k.kind] = true
	}
	var sentinels []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for _, name := range vs.Names {
			if strings.HasPrefix(name.Name, "Err") {
				sentinels = append(sentinels, name.Name)
			}
		}
		return true
	})
	must.SliceNotEmpty(t, sentinels)
	must.Eq(t, len(sentinels), len(errorKinds), must.Sprintf("sentinels %v, kinds %d", sentinels, len(errorKinds)))
}

// An error that crosses the wire as (code, kind, text) is errors.Is the same sentinel, keeps
// its status and text, whichever helper made it.
func TestErrorKinds_RoundTrip(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want error
		code int
	}{
		{"permission denied", PermissionDenied("purge-job capability required"), ErrPermissionDenied, http.StatusForbidden},
		{"job not found", NotFound(ErrJobNotFound), ErrJobNotFound, http.StatusNotFound},
		{"no leader", NoLeader(), ErrNoLeader, http.StatusInternalServerError},
		{"not leader", NotLeader(), ErrNotLeader, http.StatusInternalServerError},
		{"disk full", DiskFull("/data", 1, 2), ErrDiskFull, http.StatusInsufficientStorage},
		{"wrapped", errorsJoin(ErrDispatchTokenUsed), ErrDispatchTokenUsed, http.StatusInternalServerError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.True(t, errors.Is(tc.err, tc.want), must.Sprint("locally"))
			back := WireError(ErrorCode(tc.err), ErrorKind(tc.err), tc.err.Error())
			must.True(t, errors.Is(back, tc.want), must.Sprint("across the wire"))
			must.Eq(t, tc.code, ErrorCode(back))
			must.Eq(t, tc.err.Error(), back.Error())
		})
	}
	plain := WireError(400, "", "bad")
	must.Eq(t, 400, ErrorCode(plain))
	unknown := WireError(418, "from-a-newer-peer", "teapot")
	must.Eq(t, 418, ErrorCode(unknown))
	must.Eq(t, "teapot", unknown.Error())
}

func errorsJoin(sentinel error) error { return errors.Join(errors.New("dispatching"), sentinel) }
