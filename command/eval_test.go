package command

import (
	"net/url"
	"testing"

	"github.com/shoenig/test/must"
)

const evalsWeb = `[` +
	`{"ID":"0b2f6a1e-0000-4000-8000-000000000001","Priority":50,"Type":"service","TriggeredBy":"job-register",` +
	`"JobID":"web","Namespace":"default","Status":"complete","BlockedEval":"0b2f6a1e-0000-4000-8000-000000000002","CreateIndex":10},` +
	`{"ID":"0b2f6a1e-0000-4000-8000-000000000002","Priority":50,"Type":"service","TriggeredBy":"queued-allocs",` +
	`"JobID":"web","Namespace":"default","Status":"blocked","CreateIndex":11,` +
	`"FailedTGAllocs":{"web":{"CoalescedFailures":1,"ConstraintFiltered":{"missing drivers":2}}}}]`

const evalBlocked = `{"ID":"0b2f6a1e-0000-4000-8000-000000000002","Priority":50,"Type":"service","TriggeredBy":"queued-allocs",` +
	`"JobID":"web","Namespace":"default","Status":"blocked","PreviousEval":"0b2f6a1e-0000-4000-8000-000000000001",` +
	`"CreateIndex":11,"CreateTime":1796201706140062794,"ModifyTime":1796201706140062794,` +
	`"FailedTGAllocs":{"web":{"CoalescedFailures":1,"ConstraintFiltered":{"missing drivers":2}}},` +
	`"RelatedEvals":[{"ID":"0b2f6a1e-0000-4000-8000-000000000001","Priority":50,"TriggeredBy":"job-register","Status":"complete"}]}`

func TestEvalList(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{"GET /v1/evaluations": jsonBody(evalsWeb)})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "eval", "list", "-job", "web", "-status", "blocked")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "ID        Priority  Triggered By   Job ID  Namespace  Node ID  Status    Placement Failures\n"+
		"0b2f6a1e  50        queued-allocs  web     default    <none>   blocked   true\n"+
		"0b2f6a1e  50        job-register   web     default    <none>   complete  false\n", out)
	reqs := fa.find("GET", "/v1/evaluations")
	must.Len(t, 1, reqs)
	must.Eq(t, "web", url.Values(reqs[0].Query).Get("job"))
	must.Eq(t, "blocked", url.Values(reqs[0].Query).Get("status"))
}

func TestEvalStatus(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/evaluations": jsonBody(`[` + evalBlocked + `]`),
		"GET /v1/evaluation/0b2f6a1e-0000-4000-8000-000000000002": jsonBody(evalBlocked),
	})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "eval", "status", "0b2f")
	must.Eq(t, 0, code, must.Sprint(errOut))
	for _, want := range []string{
		"Status             = blocked", "TriggeredBy        = queued-allocs", "Placement Failures = true",
		"Related Evaluations", "0b2f6a1e  50        job-register  complete",
		"Task Group \"web\" (failed to place 2 allocation(s)):", "* Constraint \"missing drivers\": 2 nodes excluded by filter",
	} {
		must.StrContains(t, out, want)
	}
	reqs := fa.find("GET", "/v1/evaluation/0b2f6a1e-0000-4000-8000-000000000002")
	must.Len(t, 1, reqs)
	must.Eq(t, "true", url.Values(reqs[0].Query).Get("related"))

	code, _, errOut = runCLI(t, fa.srv.URL, "", "eval", "status", "x")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "at least two characters")
}
