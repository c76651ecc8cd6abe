package agent

import "testing"

// Search filters what it answers by what the caller may read, so most callers get a 200; a
// context named outright that the caller cannot read at all is a 403.
func matrixSearchEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "prefix search all", method: "PUT", path: "/v1/search", body: `{"Prefix":"w","Context":"all"}`, allow: allowResolvable},
		{name: "prefix search jobs", method: "POST", path: "/v1/search", body: `{"Prefix":"w","Context":"jobs"}`, allow: allowReadJob},
		{name: "prefix search nodes", method: "PUT", path: "/v1/search", body: `{"Prefix":"","Context":"nodes"}`, allow: allowNodeRead},
		{name: "fuzzy search all", method: "POST", path: "/v1/search/fuzzy", body: `{"Text":"web","Context":"all"}`, allow: allowResolvable},
		{name: "fuzzy search tasks", method: "PUT", path: "/v1/search/fuzzy", body: `{"Text":"web","Context":"tasks"}`, allow: allowReadJob},
	}
}

func TestACLMatrix_Search(t *testing.T) { runACLMatrix(t, matrixSearchEndpoints(), matrixRows) }

// Scaling policies are read with list-scaling-policies / read-scaling-policy, which every
// disposition that includes read-job grants; an unknown policy is a 404 for those allowed.
func matrixScalingEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "scaling policies list", method: "GET", path: "/v1/scaling/policies", allow: allowReadJob},
		{name: "scaling policy read", method: "GET", path: "/v1/scaling/policy/no-such-policy", allow: allowReadJob, okStatus: 404},
	}
}

func TestACLMatrix_Scaling(t *testing.T) { runACLMatrix(t, matrixScalingEndpoints(), matrixRows) }
