package agent

import (
	"net/http"
	"slices"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// rowProtector holds protect-job alone: what no shorthand policy grants.
const rowProtector = "protector"

var protectionMatrixRows = append(slices.Clone(matrixRows),
	matrixRow{name: rowProtector, rules: `namespace "default" { capabilities = ["protect-job"] }`})

// allowProtect: protect-job, which `write` (and so purge-job) does not include.
var allowProtect = []string{rowProtector, rowManagement}

// setWebProtected protects "web" or clears its protection, as management.
func (f *matrixFixture) setWebProtected(t *testing.T, want bool) {
	t.Helper()
	body := map[string]any{"Protected": want, "Reason": "matrix"}
	_, err := f.mgmt.Raw().Write("/v1/job/web/protection", body, nil, nil)
	must.NoError(t, err)
}

func (f *matrixFixture) webProtected(t *testing.T) bool {
	t.Helper()
	p, err := f.ta.Server().State().JobProtected(structs.DefaultNamespace, "web")
	must.NoError(t, err)
	return p != nil
}

func matrixJobProtectionEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "job protection read", method: "GET", path: "/v1/job/web/protection", allow: allowReadJob},
		{name: "job purge plan", method: "GET", path: "/v1/job/web/purge-plan", allow: allowReadJob},
		{
			name: "job protect", method: "PUT", path: "/v1/job/web/protection", body: `{"Protected":true,"Reason":"matrix"}`,
			setup: func(t *testing.T, f *matrixFixture) { f.setWebProtected(t, false) }, allow: allowProtect,
			check: func(t *testing.T, f *matrixFixture) { must.True(t, f.webProtected(t)) },
		},
		{
			name: "job unprotect", method: "POST", path: "/v1/job/web/protection", body: `{"Protected":false}`,
			setup: func(t *testing.T, f *matrixFixture) { f.setWebProtected(t, true) }, allow: allowProtect,
			check: func(t *testing.T, f *matrixFixture) { must.False(t, f.webProtected(t)) },
		},
		// Whoever may purge meets the protection: a 409, and the job is still there.
		{
			name: "purge of a protected job", method: "DELETE", path: "/v1/job/web?purge=true",
			setup: func(t *testing.T, f *matrixFixture) { f.setWebProtected(t, true) },
			allow: allowPurge, okStatus: http.StatusConflict,
			check: func(t *testing.T, f *matrixFixture) {
				must.NotNil(t, f.job(t))
				f.setWebProtected(t, false)
			},
		},
	}
}

func TestACLMatrix_JobProtection(t *testing.T) {
	runACLMatrix(t, matrixJobProtectionEndpoints(), protectionMatrixRows)
}
