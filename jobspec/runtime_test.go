package jobspec

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestParse_RuntimeInterpolation(t *testing.T) {
	cases := []struct {
		name  string
		value string
		want  string
	}{
		{name: "node attribute", value: `"${attr.kernel.name}"`, want: "${attr.kernel.name}"},
		{name: "environment variable", value: `"${NOMAD_ALLOC_DIR}"`, want: "${NOMAD_ALLOC_DIR}"},
		{name: "node field", value: `"${node.unique.id}"`, want: "${node.unique.id}"},
		{name: "index traversal", value: `"${meta["rack.zone"]}"`, want: `${meta["rack.zone"]}`},
		{name: "mixed with text", value: `"${NOMAD_ALLOC_DIR}/data/${NOMAD_ALLOC_INDEX}"`, want: "${NOMAD_ALLOC_DIR}/data/${NOMAD_ALLOC_INDEX}"},
		{name: "mixed with var", value: `"${var.dir}/${NOMAD_TASK_NAME}"`, want: "/srv/${NOMAD_TASK_NAME}"},
		{name: "heredoc", value: "<<EOF\nroot=${NOMAD_TASK_DIR}\nEOF\n", want: "root=${NOMAD_TASK_DIR}\n"},
		{name: "escaped stays escaped", value: `"$${var.dir}"`, want: "${var.dir}"},
		{name: "for expression variables are evaluated", value: `join(",", [for d in ["a", "b"] : "${d}-${NOMAD_DC}"])`, want: "a-${NOMAD_DC},b-${NOMAD_DC}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := "variable \"dir\" {\n default = \"/srv\"\n}\njob \"j\" {\n constraint {\n attribute = " + tc.value + "\n }\n}\n"
			job, err := Parse("input.hcl", []byte(src), nil)
			must.NoError(t, err)
			must.Eq(t, tc.want, job.Constraints[0].LTarget)
		})
	}
}
