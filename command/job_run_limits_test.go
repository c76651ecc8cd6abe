package command

import (
	"testing"

	"github.com/nomadfork/nomad/jobspec"
	"github.com/shoenig/test/must"
)

// Security finding 6 on the CLI path: "nomad job run file.hcl" parses with the same budget
// as the agent's parse API, so a bomb in a file fails with the limit named.
func TestSecurity_JobRunParseBombRefused(t *testing.T) {
	path := writeFile(t, "bomb.nomad.hcl", `
job "bomb" {
  meta = {
    x = jsonencode([for i in range(1024) : [for j in range(1024) : [for k in range(1024) : i + j + k]]])
  }
}
`)
	_, err := loadJob(path, false, nil, nil)
	must.ErrorIs(t, err, jobspec.ErrLimit)
	// Either bound may trip first (the step count, or the deadline on a loaded machine): both
	// are the budget, named.
	must.StrContains(t, err.Error(), "job spec exceeds the evaluation budget: evaluation ")
}
