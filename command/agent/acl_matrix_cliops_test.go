package agent

import "testing"

// matrixCLIOpsEndpoints: snapshots and the summary reconcile are management only; a caller's
// own policies need only a token that resolves; host data and the client's server list are
// agent read (and write to change). The matrix agent runs no client, so the server-list
// routes answer an allowed caller 400 ("runs no client") after the ACL check.
func matrixCLIOpsEndpoints() []matrixEndpoint {
	agentRead := []string{rowAgentRead, rowAgentWrite, rowManagement}
	return []matrixEndpoint{
		{name: "snapshot save", method: "GET", path: "/v1/operator/snapshot", allow: allowManagement},
		{name: "snapshot restore (not an archive)", method: "PUT", path: "/v1/operator/snapshot", body: "not a snapshot",
			allow: allowManagement, okStatus: 400},
		{name: "acl policy self", method: "GET", path: "/v1/acl/policy/self", allow: allowResolvable},
		{name: "system reconcile summaries", method: "PUT", path: "/v1/system/reconcile/summaries", allow: allowManagement},
		{name: "system reconcile summaries (POST)", method: "POST", path: "/v1/system/reconcile/summaries", allow: allowManagement},
		{name: "agent host", method: "GET", path: "/v1/agent/host", allow: agentRead},
		{name: "agent servers", method: "GET", path: "/v1/agent/servers", allow: agentRead, okStatus: 400},
		{name: "agent servers set", method: "PUT", path: "/v1/agent/servers?address=127.0.0.1:4647", allow: allowAgentWrite, okStatus: 400},
		{name: "agent servers set (POST)", method: "POST", path: "/v1/agent/servers?address=127.0.0.1:4647", allow: allowAgentWrite, okStatus: 400},
	}
}

func TestACLMatrix_CLIOps(t *testing.T) { runACLMatrix(t, matrixCLIOpsEndpoints(), matrixRows) }
