package agent

import "testing"

// Volume and plugin reads check upstream's capabilities before answering (empty lists,
// 404s); writes, and the Enterprise routes, answer 501 to everyone: there is nothing behind
// them to protect, and upstream's community edition answers its Enterprise routes so.
func matrixVolumeEndpoints() []matrixEndpoint {
	// csi-list-volume and csi-read-volume come with `policy = "read"` or "write".
	allowCSIRead := []string{rowAnonymousRead, rowRead, rowWrite, rowManagement}
	ep := []matrixEndpoint{
		{name: "csi volumes list", method: "GET", path: "/v1/volumes?type=csi", allow: allowCSIRead},
		{name: "csi volume read", method: "GET", path: "/v1/volume/csi/vol-1", allow: allowCSIRead, okStatus: 404},
		{name: "csi volume register", method: "PUT", path: "/v1/volume/csi/vol-1", body: `{}`, allow: allowEveryone, okStatus: 501},
		{name: "csi volume register (POST)", method: "POST", path: "/v1/volume/csi/vol-1", body: `{}`, allow: allowEveryone, okStatus: 501},
		{name: "csi volume deregister", method: "DELETE", path: "/v1/volume/csi/vol-1", allow: allowEveryone, okStatus: 501},
		{name: "csi volume create", method: "PUT", path: "/v1/volume/csi/vol-1/create", body: `{}`, allow: allowEveryone, okStatus: 501},
		{name: "csi volume create (POST)", method: "POST", path: "/v1/volume/csi/vol-1/create", body: `{}`, allow: allowEveryone, okStatus: 501},
		{name: "csi volume detach", method: "DELETE", path: "/v1/volume/csi/vol-1/detach", allow: allowEveryone, okStatus: 501},
		// Upstream's plugin block: no row but management holds one.
		{name: "plugins list", method: "GET", path: "/v1/plugins?type=csi", allow: allowManagement},
		{name: "plugin read", method: "GET", path: "/v1/plugin/csi/p-1", allow: allowManagement, okStatus: 404},
	}
	for _, path := range []string{
		"/v1/sentinel/policies", "/v1/sentinel/policy/x", "/v1/quotas", "/v1/quota", "/v1/quota/x",
		"/v1/quota/usage/x", "/v1/quota-usages", "/v1/recommendations", "/v1/recommendations/apply",
		"/v1/recommendation", "/v1/recommendation/x", "/v1/operator/license",
	} {
		for _, method := range []string{"GET", "PUT", "POST", "DELETE"} {
			ep = append(ep, matrixEndpoint{name: method + " " + path, method: method, path: path, allow: allowEveryone, okStatus: 501})
		}
	}
	return ep
}

func TestACLMatrix_Volumes(t *testing.T) { runACLMatrix(t, matrixVolumeEndpoints(), matrixRows) }
