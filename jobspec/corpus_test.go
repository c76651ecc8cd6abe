package jobspec

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/corpus/*.json from the job files")

// TestCorpus_RendersAsGolden parses every job file of the corpus (one per everyday shape:
// services with checks, templates from file(), artifacts and volumes, periodic,
// parameterized, system, sysbatch, placement) as the CLI does and compares the JSON that
// `job run -output` prints with the file beside it. A parser change that moves a rendered
// leaf fails here; when the change is intended, run with -update-corpus and review the diff.
func TestCorpus_RendersAsGolden(t *testing.T) {
	dir := filepath.Join("testdata", "corpus")
	files, err := filepath.Glob(filepath.Join(dir, "*.nomad.hcl"))
	must.NoError(t, err)
	must.SliceNotEmpty(t, files)
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".nomad.hcl")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			must.NoError(t, err)
			job, err := ParseLocal(path, src, nil, dir)
			must.NoError(t, err)
			got, err := json.MarshalIndent(struct{ Job *api.Job }{job}, "", "    ")
			must.NoError(t, err)
			got = append(got, '\n')
			golden := filepath.Join(dir, name+".json")
			if *updateCorpus {
				must.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			must.NoError(t, err)
			must.Eq(t, string(want), string(got))
		})
	}
}
