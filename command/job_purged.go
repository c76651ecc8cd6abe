package command

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// purgeRecord is one entry of the purge history, as GET /v1/jobs/purged
// returns it. The history is this fork's own API, so the type lives here
// rather than in the official client.
type purgeRecord struct {
	ID         string
	Namespace  string
	JobID      string
	JobVersion uint64
	JobType    string
	Reason     string
	Actor      *eventActor `json:",omitempty"`
	// ForcedBy is the token that forced the GC run that removed the job.
	ForcedBy    *eventActor `json:",omitempty"`
	PurgeTime   int64
	CreateIndex uint64
}

// eventActor is who caused a write, as events and purge records carry it.
type eventActor struct {
	AccessorID string
	Name       string
	Type       string
	// AllocID and OnBehalfOf are set for a workload identity: its allocation, and the token
	// that registered the job version it runs.
	AllocID    string      `json:",omitempty"`
	OnBehalfOf *tokenActor `json:",omitempty"`
}

// tokenActor names a token without its secret.
type tokenActor struct {
	AccessorID string `json:",omitempty"`
	Name       string `json:",omitempty"`
}

// JobPurgedCommand lists the purge history.
type JobPurgedCommand struct {
	Meta
	since      string
	asJSON     bool
	verifyFlag bool
}

func (c *JobPurgedCommand) Help() string {
	return helpText(`
Usage: nomad job purged [options]

  List jobs that were removed from the cluster, newest first: purged with
  "nomad job stop -purge" or collected by the garbage collector. Each record
  says when, by whom and which version was removed, and keeps the job so
  "nomad job restore <id>" can register it again.

  Use -namespace='*' to list every namespace you can read.
`, optionsHelp("Purged", c.options()))
}

func (c *JobPurgedCommand) options() []option {
	return []option{
		flagOpt(&c.since, "", "-since=<time>", "Only records at or after this RFC 3339 time, e.g. 2026-01-02T15:04:05Z."),
		boolOpt(&c.asJSON, "-json", "Print the records as JSON."),
		boolOpt(&c.verifyFlag, "-verify", "Check the purge history's hash chain instead of listing it: every\nrecord's hash, its link to the record before it, and that none is\nmissing. Exits 2 when the chain is broken, naming the first record that\nbreaks it."),
	}
}

func (c *JobPurgedCommand) Synopsis() string { return "List purged jobs" }

func (c *JobPurgedCommand) Run(args []string) int {
	fs := c.flagSetWith("job purged", c.options())
	if _, code, ok := c.parseArgs(fs, args); !ok {
		return code
	}
	if c.verifyFlag {
		return c.verify(c.asJSON)
	}
	endpoint := "/v1/jobs/purged"
	if c.since != "" {
		if _, err := time.Parse(time.RFC3339, c.since); err != nil {
			return c.fail("Invalid -since %q: expected an RFC 3339 time such as 2026-01-02T15:04:05Z", c.since)
		}
		endpoint += "?since=" + url.QueryEscape(c.since)
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	var records []*purgeRecord
	if _, err := client.Raw().Query(endpoint, &records, nil); err != nil {
		return c.fail("Error querying purged jobs: %v", err)
	}
	if records == nil {
		records = []*purgeRecord{}
	}
	return printResult(&c.Meta, records, c.asJSON, formatPurgeRecords)
}

// formatPurgeRecords is the history table. The record ID comes first
// because "nomad job restore" needs it.
func formatPurgeRecords(records []*purgeRecord) string {
	if len(records) == 0 {
		return "No purged jobs"
	}
	rows := []string{"ID|Time|Namespace|Job|Version|Reason|Actor|Accessor"}
	for _, r := range records {
		actor, accessor := "-", "-"
		if a := r.Actor; a != nil {
			actor = a.Name
			if actor == "" {
				actor = a.Type
			}
			if a.AccessorID != "" {
				accessor = a.AccessorID
			}
			// A workload identity has no accessor: the column names the token that
			// registered the job version it runs, so the audit reaches a person.
			var via []string
			if a.AllocID != "" {
				via = append(via, "alloc "+a.AllocID)
			}
			if ob := a.OnBehalfOf; ob != nil {
				via = append(via, "on behalf of "+cmp.Or(ob.Name, ob.AccessorID))
				if accessor == "-" && ob.AccessorID != "" {
					accessor = ob.AccessorID
				}
			}
			if len(via) > 0 {
				actor += " (" + strings.Join(via, ", ") + ")"
			}
		}
		// A forced GC: the GC did it, the token asked for it. The GC has no accessor, so the
		// column names the token's.
		if f := r.ForcedBy; f != nil {
			actor += " (forced by " + cmp.Or(f.Name, f.Type) + ")"
			if accessor == "-" && f.AccessorID != "" {
				accessor = f.AccessorID
			}
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%d|%s|%s|%s",
			r.ID, formatUnixNano(r.PurgeTime), r.Namespace, r.JobID, r.JobVersion, r.Reason, actor, accessor))
	}
	return formatList(rows)
}

// newJobRestore registers a purged job again from its record.
func newJobRestore(m Meta) cli.Command {
	var yes, detach bool
	return &command{Meta: m, name: "job restore", synopsis: "Register a purged job again",
		usage: `
Usage: nomad job restore [options] <record-id>

  Register a purged job again, using the spec kept in its purge record (see
  "nomad job purged"). <record-id> may be a unique prefix of the ID, as
  "nomad job purged" shows it. It fails if a job with the same ID exists. Needs the
  "submit-job" capability in the record's namespace.
`,
		options: []option{
			boolOpt(&yes, "-yes, -y", "Do not ask for confirmation."),
			boolOpt(&detach, "-detach", "Print the evaluation ID and return without monitoring."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, client, code, ok := c.connect(fs, args, "<record-id>")
			if !ok {
				return code
			}
			recordID, ok := c.resolvePurgeRecord(client, pos[0])
			if !ok {
				return 1
			}
			base := "/v1/jobs/purged/" + url.PathEscape(recordID)
			rec, err := readPurgeRecord(client, base)
			if err != nil {
				return c.fail("Error reading purge record: %v", err)
			}
			if !yes {
				question := fmt.Sprintf("Are you sure you want to restore job %q in namespace %q (version %d)?",
					rec.JobID, rec.Namespace, rec.JobVersion)
				if proceed, code := c.confirm(question, "Cancelling job restore"); !proceed {
					return code
				}
			}
			var resp api.JobRegisterResponse
			if _, err := client.Raw().Write(base+"/restore", nil, &resp, &api.WriteOptions{Namespace: rec.Namespace}); err != nil {
				return c.fail("Error restoring job: %v", err)
			}
			c.Ui.Output(fmt.Sprintf("Job %q restored", rec.JobID))
			return c.finishEval(client, resp.EvalID, detach, "Evaluation ID: "+resp.EvalID)
		},
	}
}

// readPurgeRecord reads one record. The agent may answer with the record
// itself or wrapped as {"Record": ...}; both are accepted.
func readPurgeRecord(client *api.Client, endpoint string) (*purgeRecord, error) {
	var raw map[string]json.RawMessage
	if _, err := client.Raw().Query(endpoint, &raw, nil); err != nil {
		return nil, err
	}
	body, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	if inner, ok := raw["Record"]; ok {
		body = inner
	}
	var rec purgeRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return nil, err
	}
	if rec.JobID == "" {
		return nil, fmt.Errorf("agent returned no record")
	}
	return &rec, nil
}

// purgeChainVerify is GET /v1/jobs/purged/verify.
type purgeChainVerify struct {
	Valid      bool
	Records    int
	Head       string
	Checkpoint string `json:",omitempty"`
	Unchained  int    `json:",omitempty"`
	Broken     *struct {
		ChainSeq  uint64
		ID        string `json:",omitempty"`
		Namespace string `json:",omitempty"`
		JobID     string `json:",omitempty"`
		Reason    string
	} `json:",omitempty"`
}

// verify checks the chain; a broken one exits 2, so scripts tell it from a failed request.
func (c *JobPurgedCommand) verify(asJSON bool) int {
	client, ok := c.client()
	if !ok {
		return 1
	}
	var v purgeChainVerify
	if _, err := client.Raw().Query("/v1/jobs/purged/verify", &v, nil); err != nil {
		return c.fail("Error verifying the purge history: %v", err)
	}
	if asJSON {
		if code := c.printJSON(&v); code != 0 {
			return code
		}
	} else {
		rows := []string{fmt.Sprintf("Valid|%t", v.Valid), fmt.Sprintf("Records|%d", v.Records), "Head|" + cmp.Or(v.Head, "-")}
		if v.Checkpoint != "" {
			rows = append(rows, "Checkpoint|"+v.Checkpoint)
		}
		if v.Unchained > 0 {
			rows = append(rows, fmt.Sprintf("Unchained|%d (written before the chain; not verified)", v.Unchained))
		}
		if b := v.Broken; b != nil {
			rec := fmt.Sprintf("record %d", b.ChainSeq)
			if b.ID != "" {
				rec += fmt.Sprintf(" (%s, job %q in namespace %q)", b.ID, b.JobID, b.Namespace)
			}
			rows = append(rows, "Broken at|"+rec, "Reason|"+b.Reason)
		}
		c.Ui.Output(formatKV(rows))
	}
	if !v.Valid {
		return 2
	}
	return 0
}

// resolvePurgeRecord turns a record ID or unique prefix into the exact ID, looking through
// every namespace's records the token may read, as the record ID names one purge wherever it
// happened.
func (m *Meta) resolvePurgeRecord(client *api.Client, prefix string) (string, bool) {
	if len(prefix) == 36 {
		// A whole ID is read directly.
		return prefix, true
	}
	var records []*purgeRecord
	if _, err := client.Raw().Query("/v1/jobs/purged", &records, &api.QueryOptions{Namespace: "*"}); err != nil {
		m.fail("Error querying purge records: %v", err)
		return "", false
	}
	var ids []string
	for _, r := range records {
		if r.ID == prefix {
			return r.ID, true
		}
		if strings.HasPrefix(r.ID, prefix) {
			ids = append(ids, r.ID)
		}
	}
	switch len(ids) {
	case 0:
		m.fail("No purge record with prefix or ID %q found", prefix)
		return "", false
	case 1:
		return ids[0], true
	}
	sort.Strings(ids)
	m.fail("Prefix %q matched multiple purge records: %v", prefix, ids)
	return "", false
}
