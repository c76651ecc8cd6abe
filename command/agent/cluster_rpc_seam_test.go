package agent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// TestHTTPHandlersReachServersThroughTheSeam: an HTTP handler that calls a server endpoint
// directly (s.srv.Endpoints.X.Y) works on a server agent and dereferences a nil server on a
// client-only one; every call to the servers goes through s.rpc (clusterRPC). Only the
// in-process client's own connection (client.go), the test harness and the event stream
// (a subscription, not a call: it has its own relay for client-only agents) use Endpoints.
func TestHTTPHandlersReachServersThroughTheSeam(t *testing.T) {
	files, err := filepath.Glob("*.go")
	must.NoError(t, err)
	allowed := map[string]bool{"client.go": true, "agent_harness.go": true, "event_endpoint.go": true}
	var found []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || allowed[name] {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		must.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if ok && sel.Sel.Name == "Endpoints" {
				found = append(found, fset.Position(sel.Pos()).String())
			}
			return true
		})
	}
	must.SliceEmpty(t, found, must.Sprintf("call the servers through s.rpc.RPC(\"Row.Name\", ...), not Endpoints: %v", found))
}
