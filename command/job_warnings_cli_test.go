package command

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// The agent's Warnings reach the user: job run, plan and validate print them under "Job
// Warnings:", as upstream's CLI does; an answer without warnings prints no such heading.
func TestJobCommands_PrintWarnings(t *testing.T) {
	hcl := writeFile(t, "example.nomad.hcl", exampleHCL)
	const warning = `group "web": task "server": consul: there is no Consul integration`
	withWarnings := func(body string) string {
		return strings.Replace(body, `"Warnings":""`, `"Warnings":`+jsonQuote(warning), 1)
	}
	const planAnswer = `{"JobModifyIndex":14,"Diff":null,"Annotations":{"DesiredTGUpdates":{"web":{"Ignore":1}}},` +
		`"FailedTGAllocs":null,"CreatedEvals":null,"Warnings":""}`
	const validateAnswer = `{"DriverConfigValidated":true,"ValidationErrors":null,"Error":"","Warnings":""}`
	for _, tc := range []struct {
		name   string
		args   []string
		routes func(warn bool) map[string]route
	}{
		{"run", []string{"job", "run", "-detach", hcl}, func(warn bool) map[string]route {
			if warn {
				return map[string]route{"PUT /v1/jobs": jsonBody(withWarnings(registerResponse))}
			}
			return map[string]route{"PUT /v1/jobs": jsonBody(registerResponse)}
		}},
		{"plan", []string{"job", "plan", "-diff=false", hcl}, func(warn bool) map[string]route {
			if warn {
				return map[string]route{"PUT /v1/job/example/plan": jsonBody(withWarnings(planAnswer))}
			}
			return map[string]route{"PUT /v1/job/example/plan": jsonBody(planAnswer)}
		}},
		{"validate", []string{"job", "validate", hcl}, func(warn bool) map[string]route {
			if warn {
				return map[string]route{"PUT /v1/validate/job": jsonBody(withWarnings(validateAnswer))}
			}
			return map[string]route{"PUT /v1/validate/job": jsonBody(validateAnswer)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, tc.routes(true))
			_, out, errOut := runCLI(t, fa.srv.URL, "", tc.args...)
			must.StrContains(t, out+errOut, "Job Warnings:\n"+warning)

			fa = newFakeAgent(t, tc.routes(false))
			_, out, errOut = runCLI(t, fa.srv.URL, "", tc.args...)
			must.StrNotContains(t, out+errOut, "Job Warnings")
		})
	}
}

func jsonQuote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
