package agent

import (
	"testing"

	"github.com/shoenig/test/must"
)

const matrixSinkBody = `{"Type":"webhook","Address":"http://127.0.0.1:1/hook","Topics":{"Job":["*"]},"Secret":"0123456789abcdef"}`

// putMatrixSink registers the sink "matrix" as management, so reads and deletes find it.
func (f *matrixFixture) putMatrixSink(t *testing.T) {
	t.Helper()
	_, err := f.mgmt.Raw().Write("/v1/event/sink/matrix", map[string]any{
		"Type": "webhook", "Address": "http://127.0.0.1:1/hook", "Topics": map[string][]string{"Job": {"*"}},
		"Secret": "0123456789abcdef"}, nil, nil)
	must.NoError(t, err)
}

func (f *matrixFixture) matrixSinkExists(t *testing.T) bool {
	t.Helper()
	s, err := f.ta.Server().State().EventSinkByID(nil, "matrix")
	must.NoError(t, err)
	return s != nil
}

// matrixEventSinkEndpoints: a sink receives events across namespaces whatever their ACLs, so
// every route is management's alone.
func matrixEventSinkEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "event sink list", method: "GET", path: "/v1/event/sinks", allow: allowManagement},
		{name: "event sink read", method: "GET", path: "/v1/event/sink/matrix", allow: allowManagement,
			setup: func(t *testing.T, f *matrixFixture) { f.putMatrixSink(t) }},
		{name: "event sink register", method: "PUT", path: "/v1/event/sink/matrix", body: matrixSinkBody, allow: allowManagement,
			check: func(t *testing.T, f *matrixFixture) { must.True(t, f.matrixSinkExists(t)) }},
		{name: "event sink deregister", method: "DELETE", path: "/v1/event/sink/matrix", allow: allowManagement,
			setup: func(t *testing.T, f *matrixFixture) { f.putMatrixSink(t) },
			check: func(t *testing.T, f *matrixFixture) { must.False(t, f.matrixSinkExists(t)) }},
	}
}

func TestACLMatrix_EventSinks(t *testing.T) {
	runACLMatrix(t, matrixEventSinkEndpoints(), matrixRows)
}
