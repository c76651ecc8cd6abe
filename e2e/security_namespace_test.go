//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// Issue 32 item 2 against the built binary, through the CLI as an operator would do it: a
// namespace applied from README's spec file keeps raw_exec out of that namespace for every
// token (a raw_exec task runs as the agent's user and can read the bootstrap token out of
// data_dir), `namespace status` shows the setting, a misspelt spec is refused rather than
// applied without the control, and the drivers the namespace allows still register.
func TestSecurity_E2E_NamespaceKeepsRawExecOut(t *testing.T) {
	a, mgmt, _ := aclAgent(t, t.TempDir(), "")
	url := a.httpURL

	spec := writeFile(t, "dev.hcl", `name = "dev"
capabilities {
  enabled_task_drivers   = ["docker", "exec"]
  disabled_task_drivers  = ["raw_exec"]
  disabled_network_modes = ["host"]
}
`)
	out, code := cli(t, url, mgmt, "namespace", "apply", spec)
	must.Eq(t, 0, code, must.Sprint(out))

	out, code = cli(t, url, mgmt, "namespace", "status", "dev")
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, "Enabled Task Drivers   = docker,exec")
	must.StrContains(t, out, "Disabled Task Drivers  = raw_exec")

	policy := writeFile(t, "dev-policy.hcl", `namespace "dev" { capabilities = ["submit-job", "read-job", "list-jobs"] }`)
	out, code = cli(t, url, mgmt, "acl", "policy", "apply", "dev", policy)
	must.Eq(t, 0, code, must.Sprint(out))
	out, code = cli(t, url, mgmt, "acl", "token", "create", "-name", "developer", "-policy", "dev", "-json")
	must.Eq(t, 0, code, must.Sprint(out))
	var dev struct{ SecretID string }
	must.NoError(t, json.Unmarshal([]byte(out), &dev))

	jobFile := func(id, driver string) string {
		return writeFile(t, id+".nomad.hcl", `job "`+id+`" {
  namespace = "dev"
  type      = "batch"
  group "g" {
    task "t" {
      driver = "`+driver+`"
      config {
        command = "/bin/cat"
        args    = ["/etc/hostname"]
      }
    }
  }
}
`)
	}
	for _, tc := range []struct{ who, token string }{{"developer", dev.SecretID}, {"management", mgmt}} {
		t.Run("raw_exec by "+tc.who, func(t *testing.T) {
			out, code := cli(t, url, tc.token, "job", "run", "-detach", jobFile("host-"+tc.who, "raw_exec"))
			must.NotEq(t, 0, code, must.Sprint(out))
			must.StrContains(t, out, `used task driver "raw_exec" is not allowed in namespace "dev"`)
			_, _, err := a.clientWith(mgmt).Jobs().Info("host-"+tc.who, &api.QueryOptions{Namespace: "dev"})
			must.ErrorContains(t, err, "404", must.Sprint("nothing was registered"))
		})
	}
	t.Run("exec by the developer", func(t *testing.T) {
		out, code := cli(t, url, dev.SecretID, "job", "run", "-detach", jobFile("allowed", "exec"))
		must.Eq(t, 0, code, must.Sprint(out))
	})
	t.Run("misspelt spec", func(t *testing.T) {
		typo := writeFile(t, "typo.hcl", "name = \"typo\"\ncapabilities {\n  disabled_task_driver = [\"raw_exec\"]\n}\n")
		out, code := cli(t, url, mgmt, "namespace", "apply", typo)
		must.Eq(t, 1, code, must.Sprint(out))
		must.StrContains(t, out, `"disabled_task_driver" is not expected here`)
		out, _ = cli(t, url, mgmt, "namespace", "list")
		must.False(t, strings.Contains(out, "typo"), must.Sprint(out))
	})
}
