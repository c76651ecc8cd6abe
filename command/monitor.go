package command

import (
	"flag"
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"
)

// monitor follows an evaluation until it is terminal or monitorTimeout has
// passed, printing each status change. It returns 0 for a completed
// evaluation or one still waiting, and 2 for a failed or canceled one, as
// upstream does when the scheduler could not place the work.
func (m *Meta) monitor(client *api.Client, evalID string) int {
	code, _ := m.followEval(client, evalID, shortID)
	return code
}

// followEval is monitor returning the evaluation as last read (nil when it could not be
// read), so that job run can go on to the deployment the evaluation started; id formats the
// IDs printed (shortID, or the full ID under -verbose).
func (m *Meta) followEval(client *api.Client, evalID string, id func(string) string) (int, *api.Evaluation) {
	shortID := id
	now := func() string { return formatTime(time.Now()) }
	m.Ui.Output(fmt.Sprintf("==> %s: Monitoring evaluation %q", now(), shortID(evalID)))

	wait := m.monitorTimeout
	if wait == 0 {
		wait = defaultMonitorWait
	}
	deadline := time.Now().Add(wait)
	var last string
	for first := true; ; first = false {
		eval, _, err := client.Evaluations().Info(evalID, nil)
		if err != nil {
			return m.fail("Error reading evaluation: %v", err), nil
		}
		if first && eval.JobID != "" {
			m.Ui.Output(fmt.Sprintf("    %s: Evaluation triggered by job %q", now(), eval.JobID))
		}
		if eval.Status != last {
			if last == "" {
				m.Ui.Output(fmt.Sprintf("    %s: Evaluation status is %q", now(), eval.Status))
			} else {
				m.Ui.Output(fmt.Sprintf("    %s: Evaluation status changed: %q -> %q", now(), last, eval.Status))
			}
			last = eval.Status
		}
		switch eval.Status {
		case "complete":
			if eval.DeploymentID != "" {
				m.Ui.Output(fmt.Sprintf("    %s: Evaluation within deployment: %q", now(), shortID(eval.DeploymentID)))
			}
			m.Ui.Output(fmt.Sprintf("==> %s: Evaluation %q finished with status %q", now(), shortID(evalID), eval.Status))
			return 0, eval
		case "failed", "canceled":
			m.Ui.Output(fmt.Sprintf("==> %s: Evaluation %q finished with status %q", now(), shortID(evalID), eval.Status))
			return 2, eval
		}
		if time.Now().After(deadline) {
			m.Ui.Output(fmt.Sprintf("==> %s: Evaluation %q is still %q; no longer waiting (use -detach to skip monitoring)",
				now(), shortID(evalID), eval.Status))
			return 0, eval
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// finishEval reports the evaluation a write created: when detached it prints
// detachLine (upstream prints "Evaluation ID: <id>" after job run and the
// bare ID after job stop, and scripts capture both), otherwise it monitors.
// Writes that create no evaluation (periodic or parameterized parents) need
// nothing more.
func (m *Meta) finishEval(client *api.Client, evalID string, detach bool, detachLine string) int {
	if evalID == "" {
		return 0
	}
	if detach {
		m.Ui.Output(detachLine)
		return 0
	}
	return m.monitor(client, evalID)
}

// clientForJob builds a client and resolves the job that prefix names, as
// every command about one job begins; either failure is already reported.
func (m *Meta) clientForJob(prefix string) (*api.Client, string, bool) {
	client, ok := m.client()
	if !ok {
		return nil, "", false
	}
	jobID, ok := m.resolveJob(client, prefix)
	return client, jobID, ok
}

// resolveJob turns a job ID or unique ID prefix into the exact ID, as
// upstream's commands accept prefixes.
func (m *Meta) resolveJob(client *api.Client, prefix string) (string, bool) {
	jobs, _, err := client.Jobs().List(&api.QueryOptions{Prefix: prefix})
	if err != nil {
		m.fail("Error querying job prefix %q: %v", prefix, err)
		return "", false
	}
	for _, j := range jobs {
		if j.ID == prefix {
			return j.ID, true
		}
	}
	switch len(jobs) {
	case 0:
		m.fail("No job(s) with prefix or ID %q found", prefix)
		return "", false
	case 1:
		return jobs[0].ID, true
	default:
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			ids[i] = j.ID
		}
		m.fail("Prefix %q matched multiple jobs: %v", prefix, ids)
		return "", false
	}
}

// connectJob is connect for a command whose first argument is a job ID or unique prefix: it
// also resolves the job, reporting a missing or ambiguous one.
func (m *Meta) connectJob(fs *flag.FlagSet, args []string, want ...string) (pos []string, client *api.Client, jobID string, code int, ok bool) {
	pos, code, ok = m.parseArgs(fs, args, want...)
	if !ok {
		return nil, nil, "", code, false
	}
	client, jobID, ok = m.clientForJob(pos[0])
	if !ok {
		return nil, nil, "", 1, false
	}
	return pos, client, jobID, 0, true
}
