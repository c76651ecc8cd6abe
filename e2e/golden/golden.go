package golden

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// ManifestFormat is the version of the manifest's own layout.
const ManifestFormat = 1

// File names inside a golden dir.
const (
	ManifestFile = "manifest.json"
	DataDirFile  = "data_dir.tar.gz"
	SnapshotFile = "snapshot.snap"
)

// Manifest lists what a golden dir holds. Objects marked InSnapshot (or with a Snapshot*
// field) were written before the snapshot was saved; the others only in the log after it.
type Manifest struct {
	Format int
	// Binary is `nomad version` of the binary that wrote the dir.
	Binary string
	// ManagementToken is the bootstrap token's secret: the checks read with it.
	ManagementToken string
	// SnapshotIndex is the Raft index the saved snapshot ends at.
	SnapshotIndex uint64
	Policies      []Policy
	Tokens        []Token
	Namespaces    []Namespace
	Jobs          []Job
	Purged        []Purged
	Variables     []Variable
}

type Policy struct {
	Name, Description, Rules string
	InSnapshot               bool
}

type Token struct {
	AccessorID, SecretID, Name, Type string
	Policies                         []string
	InSnapshot                       bool
}

type Namespace struct {
	Name, Description string
	InSnapshot        bool
}

type Job struct {
	Namespace, ID string
	// Version is the job's latest version; Versions how many the server keeps.
	Version  uint64
	Versions int
	Stop     bool
	Meta     map[string]string
	// SnapshotVersion, SnapshotVersions and SnapshotMeta are the same as of the snapshot; a
	// nil SnapshotVersion means the job was registered after it.
	SnapshotVersion  *uint64
	SnapshotVersions int
	SnapshotMeta     map[string]string
}

type Purged struct {
	Namespace, JobID, RecordID string
	JobVersion                 uint64
	InSnapshot                 bool
}

type Variable struct {
	Namespace, Path string
	Items           map[string]string
	// SnapshotItems are the items as of the snapshot; nil when the variable came after it.
	SnapshotItems map[string]string
}

// ReadManifest reads dir's manifest.
func ReadManifest(dir string) (*Manifest, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("%s: format %d, this checker reads %d", ManifestFile, m.Format, ManifestFormat)
	}
	return &m, nil
}

// Check reads every object of m through c (which carries m's management token) and returns
// every difference. fromSnapshot checks the state as of the snapshot instead: what a restore
// of the saved archive must bring back.
func Check(c *api.Client, m *Manifest, fromSnapshot bool) error {
	ck := &checker{c: c}
	for _, p := range m.Policies {
		if fromSnapshot && !p.InSnapshot {
			continue
		}
		got, _, err := c.ACLPolicies().Info(p.Name, nil)
		if ck.ok(err, "policy %s", p.Name) {
			ck.eq(p.Description, got.Description, "policy %s description", p.Name)
			ck.eq(p.Rules, got.Rules, "policy %s rules", p.Name)
		}
	}
	for _, tok := range m.Tokens {
		if fromSnapshot && !tok.InSnapshot {
			continue
		}
		got, _, err := c.ACLTokens().Info(tok.AccessorID, nil)
		if ck.ok(err, "token %s", tok.Name) {
			ck.eq(tok.Name, got.Name, "token %s name", tok.AccessorID)
			ck.eq(tok.Type, got.Type, "token %s type", tok.Name)
			ck.eq(strings.Join(sorted(tok.Policies), ","), strings.Join(sorted(got.Policies), ","), "token %s policies", tok.Name)
		}
		// The secret itself still authenticates.
		self, _, err := c.ACLTokens().Self(&api.QueryOptions{AuthToken: tok.SecretID})
		if ck.ok(err, "token %s reading itself with its secret", tok.Name) {
			ck.eq(tok.AccessorID, self.AccessorID, "token %s self", tok.Name)
		}
	}
	for _, ns := range m.Namespaces {
		if fromSnapshot && !ns.InSnapshot {
			continue
		}
		got, _, err := c.Namespaces().Info(ns.Name, nil)
		if ck.ok(err, "namespace %s", ns.Name) {
			ck.eq(ns.Description, got.Description, "namespace %s description", ns.Name)
		}
	}
	for _, j := range m.Jobs {
		version, versions, meta := j.Version, j.Versions, j.Meta
		if fromSnapshot {
			if j.SnapshotVersion == nil {
				continue
			}
			version, versions, meta = *j.SnapshotVersion, j.SnapshotVersions, j.SnapshotMeta
		}
		q := &api.QueryOptions{Namespace: j.Namespace}
		got, _, err := c.Jobs().Info(j.ID, q)
		if !ck.ok(err, "job %s/%s", j.Namespace, j.ID) {
			continue
		}
		ck.eq(version, *got.Version, "job %s/%s version", j.Namespace, j.ID)
		ck.eq(j.Stop, got.Stop != nil && *got.Stop, "job %s/%s stopped", j.Namespace, j.ID)
		ck.eq(fmt.Sprint(meta), fmt.Sprint(got.Meta), "job %s/%s meta", j.Namespace, j.ID)
		all, _, _, err := c.Jobs().Versions(j.ID, false, q)
		if ck.ok(err, "job %s/%s versions", j.Namespace, j.ID) {
			ck.eq(versions, len(all), "job %s/%s number of versions", j.Namespace, j.ID)
		}
	}
	for _, p := range m.Purged {
		if fromSnapshot && !p.InSnapshot {
			continue
		}
		_, _, err := c.Jobs().Info(p.JobID, &api.QueryOptions{Namespace: p.Namespace})
		if err == nil || !strings.Contains(err.Error(), "404") {
			ck.fail("purged job %s/%s: want 404, got %v", p.Namespace, p.JobID, err)
		}
		var rec struct {
			ID, Namespace, JobID, Reason string
			JobVersion                   uint64
		}
		_, err = c.Raw().Query("/v1/jobs/purged/"+p.RecordID, &rec, &api.QueryOptions{Namespace: p.Namespace})
		if ck.ok(err, "purge record %s of %s/%s", p.RecordID, p.Namespace, p.JobID) {
			ck.eq(p.JobID, rec.JobID, "purge record %s job", p.RecordID)
			ck.eq(p.Namespace, rec.Namespace, "purge record %s namespace", p.RecordID)
			ck.eq(p.JobVersion, rec.JobVersion, "purge record %s job version", p.RecordID)
			ck.eq("purge", rec.Reason, "purge record %s reason", p.RecordID)
		}
	}
	if len(m.Purged) > 0 {
		var verify struct{ Valid bool }
		_, err := c.Raw().Query("/v1/jobs/purged/verify", &verify, nil)
		if ck.ok(err, "purge history verification") {
			ck.eq(true, verify.Valid, "purge history chain valid")
		}
	}
	for _, v := range m.Variables {
		items := v.Items
		if fromSnapshot {
			if v.SnapshotItems == nil {
				continue
			}
			items = v.SnapshotItems
		}
		got, _, err := c.Variables().Read(v.Path, &api.QueryOptions{Namespace: v.Namespace})
		if ck.ok(err, "variable %s/%s", v.Namespace, v.Path) {
			ck.eq(fmt.Sprint(items), fmt.Sprint(map[string]string(got.Items)), "variable %s/%s items", v.Namespace, v.Path)
		}
	}
	return errors.Join(ck.errs...)
}

type checker struct {
	c    *api.Client
	errs []error
}

func (ck *checker) fail(format string, args ...any) {
	ck.errs = append(ck.errs, fmt.Errorf(format, args...))
}

func (ck *checker) ok(err error, format string, args ...any) bool {
	if err != nil {
		ck.fail("%s: %v", fmt.Sprintf(format, args...), err)
		return false
	}
	return true
}

func (ck *checker) eq(want, got any, format string, args ...any) {
	if fmt.Sprint(want) != fmt.Sprint(got) {
		ck.fail("%s: want %v, got %v", fmt.Sprintf(format, args...), want, got)
	}
}

func sorted(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}
