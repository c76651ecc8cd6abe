package jobspec

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

func TestParseVariablesFile(t *testing.T) {
	got, err := ParseVariablesFile("vars.hcl", []byte(`
name  = "web"
count = 3
tags  = ["a", "b"]
text  = <<EOT
line one
line two
EOT
`))
	must.NoError(t, err)
	must.Eq(t, map[string]string{
		"name":  "web",
		"count": "3",
		"tags":  `["a", "b"]`,
		"text":  "line one\nline two\n",
	}, got)

	// Nothing is evaluated here: an expression is handed to Parse as source, to be
	// evaluated under its budget.
	got, err = ParseVariablesFile("vars.hcl", []byte(`v = [for i in range(1024) : i]`))
	must.NoError(t, err)
	must.Eq(t, "[for i in range(1024) : i]", got["v"])
}

func TestSecurity_ParseVariablesFileLimits(t *testing.T) {
	_, err := ParseVariablesFile("vars.hcl", []byte("v = "+strings.Repeat("[", 200)+strings.Repeat("]", 200)))
	must.ErrorIs(t, err, ErrLimit)
	must.StrContains(t, err.Error(), "source nests deeper than 128 levels")

	_, err = ParseVariablesFile("vars.hcl", []byte(`v = "`+strings.Repeat("x", 2<<20)+`"`))
	must.ErrorIs(t, err, ErrLimit)
	must.StrContains(t, err.Error(), "variables file is 2097158 bytes, over the limit of 1048576")
}
