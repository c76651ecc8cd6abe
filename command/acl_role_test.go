package command

import "testing"

const (
	// roleOps is the role most cases read or write.
	roleOps     = `{"ID":"r-1","Name":"ops","Description":"operators","Policies":[{"Name":"a"},{"Name":"b"}],"CreateIndex":3,"ModifyIndex":4}`
	roleOpsText = "ID           = r-1\n" +
		"Name         = ops\n" +
		"Description  = operators\n" +
		"Policies     = a,b\n" +
		"Create Index = 3\n" +
		"Modify Index = 4\n"
	roleOpsJSON = "{\n" +
		"    \"ID\": \"r-1\",\n" +
		"    \"Name\": \"ops\",\n" +
		"    \"Description\": \"operators\",\n" +
		"    \"Policies\": [\n" +
		"        {\n" +
		"            \"Name\": \"a\"\n" +
		"        },\n" +
		"        {\n" +
		"            \"Name\": \"b\"\n" +
		"        }\n" +
		"    ],\n" +
		"    \"CreateIndex\": 3,\n" +
		"    \"ModifyIndex\": 4\n" +
		"}\n"
)

func TestACLRoleCommands(t *testing.T) {
	runCLICases(t, []cliCase{
		{
			name: "create",
			routes: map[string]route{
				"PUT /v1/acl/role": jsonBody(roleOps),
			},
			args:   []string{"acl", "role", "create", "-name", "ops", "-description", "operators", "-policy", "a", "-policy", "b"},
			stdout: roleOpsText,
		},
		{
			name: "create json",
			routes: map[string]route{
				"PUT /v1/acl/role": jsonBody(roleOps),
			},
			args:   []string{"acl", "role", "create", "-json", "-name", "ops", "-policy", "a"},
			stdout: roleOpsJSON,
		},
		{
			name:   "create without name",
			args:   []string{"acl", "role", "create", "-policy", "a"},
			code:   1,
			stderr: "ACL role name must be specified using the -name flag\n",
		},
		{
			name:   "create without policy",
			args:   []string{"acl", "role", "create", "-name", "ops"},
			code:   1,
			stderr: "At least one policy must be specified using the -policy flag\n",
		},
		{
			name:   "create without name before bad address",
			args:   []string{"acl", "role", "create", "-address=://bad", "-policy", "a"},
			code:   1,
			stderr: "ACL role name must be specified using the -name flag\n",
		},
		{
			name:   "create with argument",
			args:   []string{"acl", "role", "create", "-name", "ops", "-policy", "a", "x"},
			code:   1,
			stderr: "This command takes no arguments\n",
		},
		{
			name: "create error",
			routes: map[string]route{
				"PUT /v1/acl/role": textError(400, "policy not found"),
			},
			args:   []string{"acl", "role", "create", "-name", "ops", "-policy", "a"},
			code:   1,
			stderr: "Error creating ACL role: Unexpected response code: 400 (policy not found)\n",
		},
		{
			name: "list",
			routes: map[string]route{
				"GET /v1/acl/roles": jsonBody(`[{"ID":"r-2","Name":"web","Description":"","Policies":[{"Name":"w"}]},{"ID":"r-1","Name":"ops","Description":"operators","Policies":[{"Name":"a"},{"Name":"b"}]}]`),
			},
			args: []string{"acl", "role", "list"},
			stdout: "ID   Name  Description  Policies\n" +
				"r-2  web                w\n" +
				"r-1  ops   operators    a,b\n",
		},
		{
			name: "list empty",
			routes: map[string]route{
				"GET /v1/acl/roles": jsonBody(`[]`),
			},
			args:   []string{"acl", "role", "list"},
			stdout: "No ACL roles found\n",
		},
		{
			name: "list json",
			routes: map[string]route{
				"GET /v1/acl/roles": jsonBody(`[{"ID":"r-1","Name":"ops","Policies":[{"Name":"a"}]}]`),
			},
			args: []string{"acl", "role", "list", "-json"},
			stdout: "[\n" +
				"    {\n" +
				"        \"ID\": \"r-1\",\n" +
				"        \"Name\": \"ops\",\n" +
				"        \"Description\": \"\",\n" +
				"        \"Policies\": [\n" +
				"            {\n" +
				"                \"Name\": \"a\"\n" +
				"            }\n" +
				"        ],\n" +
				"        \"CreateIndex\": 0,\n" +
				"        \"ModifyIndex\": 0\n" +
				"    }\n" +
				"]\n",
		},
		{
			name: "list error",
			routes: map[string]route{
				"GET /v1/acl/roles": textError(500, "boom"),
			},
			args:   []string{"acl", "role", "list"},
			code:   1,
			stderr: "Error listing ACL roles: Unexpected response code: 500 (boom)\n",
		},
		{
			name:   "list with argument",
			args:   []string{"acl", "role", "list", "x"},
			code:   1,
			stderr: "This command takes no arguments\n",
		},
		{
			name: "info by id",
			routes: map[string]route{
				"GET /v1/acl/role/r-1": jsonBody(roleOps),
			},
			args:   []string{"acl", "role", "info", "r-1"},
			stdout: roleOpsText,
		},
		{
			name: "info by name",
			routes: map[string]route{
				"GET /v1/acl/role/name/ops": jsonBody(roleOps),
			},
			args:   []string{"acl", "role", "info", "-by-name", "ops"},
			stdout: roleOpsText,
		},
		{
			name: "info json",
			routes: map[string]route{
				"GET /v1/acl/role/r-1": jsonBody(roleOps),
			},
			args:   []string{"acl", "role", "info", "-json", "r-1"},
			stdout: roleOpsJSON,
		},
		{
			name:   "info not found",
			args:   []string{"acl", "role", "info", "r-9"},
			code:   1,
			stderr: "Error reading ACL role: Unexpected response code: 404 (not found)\n",
		},
		{
			name:   "info without argument",
			args:   []string{"acl", "role", "info"},
			code:   1,
			stderr: "This command takes one argument: <id>\n",
		},
		{
			name:   "update no-merge without policy",
			args:   []string{"acl", "role", "update", "-no-merge", "r-1"},
			code:   1,
			stderr: "-no-merge needs at least one -policy\n",
		},
		{
			name: "update replaces policies",
			routes: map[string]route{
				"GET /v1/acl/role/r-1": jsonBody(roleOps),
				"PUT /v1/acl/role/r-1": jsonBody(`{"ID":"r-1","Name":"ops2","Description":"","Policies":[{"Name":"c"}],"CreateIndex":3,"ModifyIndex":6}`),
			},
			args: []string{"acl", "role", "update", "-no-merge", "-policy", "c", "-name", "ops2", "-description=", "r-1"},
			stdout: "ID           = r-1\n" +
				"Name         = ops2\n" +
				"Description  = <none>\n" +
				"Policies     = c\n" +
				"Create Index = 3\n" +
				"Modify Index = 6\n",
		},
		{
			name:   "update not found",
			args:   []string{"acl", "role", "update", "-name", "x", "r-9"},
			code:   1,
			stderr: "Error reading ACL role: Unexpected response code: 404 (not found)\n",
		},
		{
			name: "update error",
			routes: map[string]route{
				"GET /v1/acl/role/r-1": jsonBody(roleOps),
				"PUT /v1/acl/role/r-1": textError(400, "invalid"),
			},
			args:   []string{"acl", "role", "update", "-name", "x", "r-1"},
			code:   1,
			stderr: "Error updating ACL role: Unexpected response code: 400 (invalid)\n",
		},
		{
			name:   "update without argument",
			args:   []string{"acl", "role", "update"},
			code:   1,
			stderr: "This command takes one argument: <id>\n",
		},
		{
			name: "delete",
			routes: map[string]route{
				"DELETE /v1/acl/role/r-1": jsonBody(``),
			},
			args:   []string{"acl", "role", "delete", "r-1"},
			stdout: "ACL role r-1 successfully deleted\n",
		},
		{
			name: "delete error",
			routes: map[string]route{
				"DELETE /v1/acl/role/r-1": textError(404, "ACL role not found"),
			},
			args:   []string{"acl", "role", "delete", "r-1"},
			code:   1,
			stderr: "Error deleting ACL role: Unexpected response code: 404 (ACL role not found)\n",
		},
		{
			name:   "delete without argument",
			args:   []string{"acl", "role", "delete"},
			code:   1,
			stderr: "This command takes one argument: <id>\n",
		},
	})
}
