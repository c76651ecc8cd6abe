package jobspec

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestParse_Variables(t *testing.T) {
	const decl = `
variable "region" {
  type    = string
  default = "global"
}
variable "dcs" {
  type    = list(string)
  default = ["dc1"]
}
variable "count" {
  type    = number
  default = 1
}
variable "enabled" {
  type    = bool
  default = true
}
locals {
  name = "${var.region}-${local.suffix}"
  suffix = upper("web")
}
job "j" {
  region      = var.region
  datacenters = var.dcs
  meta {
    name    = local.name
    enabled = var.enabled
    joined  = join(",", concat(var.dcs, ["x"]))
  }
  group "g" {
    count = var.count
  }
}
`
	type want struct {
		region string
		dcs    []string
		count  int
		meta   map[string]string
	}
	cases := []struct {
		name    string
		src     string
		vars    map[string]string
		want    want
		wantErr string
	}{
		{
			name: "defaults",
			src:  decl,
			want: want{region: "global", dcs: []string{"dc1"}, count: 1,
				meta: map[string]string{"name": "global-WEB", "enabled": "true", "joined": "dc1,x"}},
		},
		{
			name: "overrides converted to declared types",
			src:  decl,
			vars: map[string]string{"region": "eu", "dcs": `["a", "b"]`, "count": "3", "enabled": "false"},
			want: want{region: "eu", dcs: []string{"a", "b"}, count: 3,
				meta: map[string]string{"name": "eu-WEB", "enabled": "false", "joined": "a,b,x"}},
		},
		{
			name:    "missing value",
			src:     "variable \"region\" {\n  type = string\n}\njob \"j\" { region = var.region }",
			wantErr: `input.hcl:1,1-18: Missing variable value; Variable "region" has no default, so a value must be given for it.`,
		},
		{
			name:    "undeclared value",
			src:     decl,
			vars:    map[string]string{"regoin": "eu"},
			wantErr: `Undeclared variable; A value was given for variable "regoin", but it is not declared`,
		},
		{
			name:    "override of wrong type",
			src:     decl,
			vars:    map[string]string{"count": "many"},
			wantErr: `Invalid value for variable; Variable "count" must be number: a number is required.`,
		},
		{
			name:    "undeclared reference",
			src:     `job "j" { region = var.nope }`,
			wantErr: `input.hcl:1,23-28: Unsupported attribute; This object does not have an attribute named "nope".`,
		},
		{
			name: "untyped variable takes the string",
			src: `variable "v" {}
job "j" { region = var.v }`,
			vars: map[string]string{"v": "42"},
			want: want{region: "42"},
		},
		{
			name: "validation",
			src: `variable "count" {
  type = number
  default = 0
  validation {
    condition     = var.count > 0
    error_message = "count must be positive"
  }
}
job "j" {}`,
			wantErr: `count must be positive`,
		},
		{
			name: "local cycle",
			src: `locals {
  a = local.b
  b = local.a
}
job "j" {}`,
			wantErr: `Cycle in local values; These locals refer to each other: local.a, local.b.`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, err := Parse("input.hcl", []byte(tc.src), tc.vars)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want.region, *job.Region)
			must.Eq(t, tc.want.dcs, job.Datacenters)
			must.Eq(t, tc.want.meta, job.Meta)
			if tc.want.count != 0 {
				must.Eq(t, tc.want.count, *job.TaskGroups[0].Count)
			}
		})
	}
}
