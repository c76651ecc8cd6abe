package command

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"
)

const (
	// policyDeployer is the policy the info cases read.
	policyDeployer     = `{"Name":"deployer","Description":"","Rules":"namespace \"default\" {\n  policy = \"write\"\n}","CreateIndex":3,"ModifyIndex":5}`
	policyDeployerJSON = "{\n" +
		"    \"Name\": \"deployer\",\n" +
		"    \"Description\": \"\",\n" +
		"    \"Rules\": \"namespace \\\"default\\\" {\\n  policy = \\\"write\\\"\\n}\",\n" +
		"    \"JobACL\": null,\n" +
		"    \"CreateIndex\": 3,\n" +
		"    \"ModifyIndex\": 5\n" +
		"}\n"
)

func TestACLPolicyCommands(t *testing.T) {
	runCLICases(t, []cliCase{
		{
			name: "info",
			routes: map[string]route{
				"GET /v1/acl/policy/deployer": jsonBody(policyDeployer),
			},
			args: []string{"acl", "policy", "info", "deployer"},
			stdout: "Name        = deployer\n" +
				"Description = <none>\n" +
				"CreateIndex = 3\n" +
				"ModifyIndex = 5\n" +
				"\n" +
				"Rules\n" +
				"\n" +
				"namespace \"default\" {\n" +
				"  policy = \"write\"\n" +
				"}\n",
		},
		{
			name: "info json",
			routes: map[string]route{
				"GET /v1/acl/policy/deployer": jsonBody(policyDeployer),
			},
			args:   []string{"acl", "policy", "info", "-json", "deployer"},
			stdout: policyDeployerJSON,
		},
		{
			name: "info flag after argument",
			routes: map[string]route{
				"GET /v1/acl/policy/deployer": jsonBody(policyDeployer),
			},
			args:   []string{"acl", "policy", "info", "deployer", "-json"},
			stdout: policyDeployerJSON,
		},
		{
			name:   "info not found",
			args:   []string{"acl", "policy", "info", "deployer"},
			code:   1,
			stderr: "Error reading ACL policy: Unexpected response code: 404 (not found)\n",
		},
		{
			name:   "info without argument",
			args:   []string{"acl", "policy", "info"},
			code:   1,
			stderr: "This command takes one argument: <name>\n",
		},
		{
			name: "info help",
			args: []string{"acl", "policy", "info", "-h"},
			code: cli.RunResultHelp,
		},
		{
			name:   "info bad flag",
			args:   []string{"acl", "policy", "info", "-bogus", "x"},
			code:   1,
			stderr: "Error parsing flags: flag provided but not defined: -bogus\n",
		},
		{
			name: "list sorted by name",
			routes: map[string]route{
				"GET /v1/acl/policies": jsonBody(`[{"Name":"zeta","Description":"last"},{"Name":"a-b","Description":""},{"Name":"a","Description":"first"}]`),
			},
			args: []string{"acl", "policy", "list"},
			stdout: "Name  Description\n" +
				"a     first\n" +
				"a-b\n" +
				"zeta  last\n",
		},
		{
			name: "list empty",
			routes: map[string]route{
				"GET /v1/acl/policies": jsonBody(`[]`),
			},
			args:   []string{"acl", "policy", "list"},
			stdout: "No policies found\n",
		},
		{
			name: "list json keeps agent order",
			routes: map[string]route{
				"GET /v1/acl/policies": jsonBody(`[{"Name":"zeta","Description":"last"},{"Name":"a","Description":"first"}]`),
			},
			args: []string{"acl", "policy", "list", "-json"},
			stdout: "[\n" +
				"    {\n" +
				"        \"Name\": \"zeta\",\n" +
				"        \"Description\": \"last\",\n" +
				"        \"JobACL\": null,\n" +
				"        \"CreateIndex\": 0,\n" +
				"        \"ModifyIndex\": 0\n" +
				"    },\n" +
				"    {\n" +
				"        \"Name\": \"a\",\n" +
				"        \"Description\": \"first\",\n" +
				"        \"JobACL\": null,\n" +
				"        \"CreateIndex\": 0,\n" +
				"        \"ModifyIndex\": 0\n" +
				"    }\n" +
				"]\n",
		},
		{
			name: "list json empty",
			routes: map[string]route{
				"GET /v1/acl/policies": jsonBody(`[]`),
			},
			args:   []string{"acl", "policy", "list", "-json"},
			stdout: "[]\n",
		},
		{
			name: "list error",
			routes: map[string]route{
				"GET /v1/acl/policies": textError(403, "Permission denied"),
			},
			args:   []string{"acl", "policy", "list"},
			code:   1,
			stderr: "Error listing ACL policies: Unexpected response code: 403 (Permission denied)\n",
		},
		{
			name:   "list with argument",
			args:   []string{"acl", "policy", "list", "x"},
			code:   1,
			stderr: "This command takes no arguments\n",
		},
		{
			name:   "list bad address",
			args:   []string{"acl", "policy", "list", "-address=://bad"},
			code:   1,
			stderr: "Error initializing client: invalid address '://bad': parse \"://bad\": missing protocol scheme\n",
		},
		{
			name: "delete",
			routes: map[string]route{
				"DELETE /v1/acl/policy/deployer": jsonBody(``),
			},
			args:   []string{"acl", "policy", "delete", "deployer"},
			stdout: "Successfully deleted \"deployer\" ACL policy!\n",
		},
		{
			name: "delete error",
			routes: map[string]route{
				"DELETE /v1/acl/policy/deployer": textError(500, "boom"),
			},
			args:   []string{"acl", "policy", "delete", "deployer"},
			code:   1,
			stderr: "Error deleting ACL policy: Unexpected response code: 500 (boom)\n",
		},
		{
			name:   "delete two arguments",
			args:   []string{"acl", "policy", "delete", "a", "b"},
			code:   1,
			stderr: "This command takes one argument: <name>\n",
		},
		{
			name:   "delete json flag is unknown",
			args:   []string{"acl", "policy", "delete", "-json", "a"},
			code:   1,
			stderr: "Error parsing flags: flag provided but not defined: -json\n",
		},
		{
			name: "apply from stdin",
			routes: map[string]route{
				"PUT /v1/acl/policy/p": jsonBody(``),
			},
			stdin:  `namespace "x" {}`,
			args:   []string{"acl", "policy", "apply", "p", "-"},
			stdout: "Successfully wrote \"p\" ACL policy!\n",
		},
		{
			name:   "apply -task without -group",
			stdin:  `namespace "x" {}`,
			args:   []string{"acl", "policy", "apply", "-job", "janitor", "-task", "t", "p", "-"},
			code:   1,
			stderr: "-task needs -group\n",
		},
		{
			name:   "apply -group without -job",
			stdin:  `namespace "x" {}`,
			args:   []string{"acl", "policy", "apply", "-group", "g", "p", "-"},
			code:   1,
			stderr: "-group and -task need -job\n",
		},
		{
			name:   "apply one argument",
			args:   []string{"acl", "policy", "apply", "p"},
			code:   1,
			stderr: "This command takes two arguments: <name> <path>\n",
		},
		{
			name:   "apply missing file",
			args:   []string{"acl", "policy", "apply", "p", "/nonexistent/rules.hcl"},
			code:   1,
			stderr: "Error reading policy rules: open /nonexistent/rules.hcl: no such file or directory\n",
		},
		{
			name:   "apply missing file before bad address",
			args:   []string{"acl", "policy", "apply", "-address=://bad", "p", "/nonexistent/rules.hcl"},
			code:   1,
			stderr: "Error reading policy rules: open /nonexistent/rules.hcl: no such file or directory\n",
		},
		{
			name: "apply error",
			routes: map[string]route{
				"PUT /v1/acl/policy/p": textError(400, "bad rules"),
			},
			stdin:  `x`,
			args:   []string{"acl", "policy", "apply", "p", "-"},
			code:   1,
			stderr: "Error writing ACL policy: Unexpected response code: 400 (bad rules)\n",
		},
	})
}

// -job binds the policy to a job's workload identities, in -namespace (default "default").
func TestACLPolicyApply_JobBinding(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{name: "token policy", args: nil, want: `null`},
		{name: "job", args: []string{"-job", "janitor"}, want: `{"Namespace":"default","JobID":"janitor","Group":"","Task":""}`},
		{name: "task in a namespace", args: []string{"-namespace", "ops", "-job", "janitor", "-group", "g", "-task", "t"},
			want: `{"Namespace":"ops","JobID":"janitor","Group":"g","Task":"t"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{"PUT /v1/acl/policy/janitor": jsonBody(``)})
			args := append(append([]string{"acl", "policy", "apply"}, tc.args...), "janitor", "-")
			code, _, errOut := runCLI(t, fa.srv.URL, `namespace "default" { capabilities = ["purge-job"] }`, args...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			reqs := fa.find("PUT", "/v1/acl/policy/janitor")
			must.SliceLen(t, 1, reqs)
			var body struct{ JobACL json.RawMessage }
			must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &body))
			must.Eq(t, tc.want, string(body.JobACL))
		})
	}
}
