//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// cli runs the nomad binary with the agent's address and token and returns its combined
// output and exit code.
func cli(t *testing.T, addr, token string, args ...string) (string, int) {
	t.Helper()
	return cliInput(t, addr, token, "", args...)
}

// cliInput is cli with what the user types on standard input.
func cliInput(t *testing.T, addr, token, input string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "NOMAD_ADDR="+addr, "NOMAD_TOKEN="+token)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("running nomad %v: %v", args, err)
	}
	return string(out), code
}

// bootstrapACL runs `nomad acl bootstrap` and returns the management token's secret.
func bootstrapACL(t *testing.T, addr string) string {
	t.Helper()
	out, code := cli(t, addr, "", "acl", "bootstrap", "-json")
	must.Eq(t, 0, code, must.Sprint(out))
	var boot struct{ SecretID string }
	must.NoError(t, json.Unmarshal([]byte(out), &boot))
	return boot.SecretID
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	must.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// TestCLI_RestrictingPurge walks the README's "Restricting purge" and "Alerting on purges"
// sections with the real binary: a developer token may run and stop but not purge; an
// operator token purges; the purge alert stream sees only the purge, with its actor; the
// purge history names the operator and can restore the job.
func TestCLI_RestrictingPurge(t *testing.T) {
	config, url := writeConfig(t, t.TempDir(), "acl { enabled = true }")
	startAgent(t, config, url)

	mgmt := bootstrapACL(t, url)

	dev := writeFile(t, "developers.hcl", `namespace "default" {
  capabilities = ["list-jobs", "read-job", "parse-job", "submit-job", "scale-job", "read-job-scaling"]
}`)
	ops := writeFile(t, "operators.hcl", `namespace "*" { policy = "write" }`)
	for _, args := range [][]string{
		{"acl", "policy", "apply", "-description", "view, run, stop, scale", "developers", dev},
		{"acl", "policy", "apply", "-description", "may purge", "operators", ops},
	} {
		out, code := cli(t, url, mgmt, args...)
		must.Eq(t, 0, code, must.Sprint(out))
	}
	secretOf := func(name, policy string) string {
		out, code := cli(t, url, mgmt, "acl", "token", "create", "-name", name, "-policy", policy, "-json")
		must.Eq(t, 0, code, must.Sprint(out))
		var tok struct{ SecretID string }
		must.NoError(t, json.Unmarshal([]byte(out), &tok))
		return tok.SecretID
	}
	alice, olga := secretOf("alice", "developers"), secretOf("olga", "operators")

	// The purge alert stream, started before anything happens.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := exec.CommandContext(ctx, binary(t), "event", "stream", "-purged")
	stream.Env = append(os.Environ(), "NOMAD_ADDR="+url, "NOMAD_TOKEN="+olga)
	stdout, err := stream.StdoutPipe()
	must.NoError(t, err)
	must.NoError(t, stream.Start())
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	time.Sleep(500 * time.Millisecond) // let the subscription open before the writes

	job := writeFile(t, "example.nomad.hcl", `job "example" {
  group "web" {
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do sleep 1; done"]
      }
    }
  }
}`)
	out, code := cli(t, url, alice, "job", "run", "-detach", job)
	must.Eq(t, 0, code, must.Sprint(out))
	out, code = cli(t, url, alice, "job", "stop", "-purge", "-yes", "-detach", "example")
	must.Eq(t, 1, code)
	must.StrContains(t, out, `Permission denied: purge-job capability required in namespace "default"`)
	out, code = cli(t, url, alice, "job", "stop", "-detach", "example")
	must.Eq(t, 0, code, must.Sprint(out))
	out, code = cli(t, url, alice, "job", "status", "example")
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, "dead")
	out, code = cli(t, url, olga, "job", "stop", "-purge", "-yes", "-detach", "example")
	must.Eq(t, 0, code, must.Sprint(out))

	select {
	case line := <-lines:
		must.StrContains(t, line, "purge")
		must.StrContains(t, line, "olga")
		must.StrContains(t, line, "example")
	case <-time.After(10 * time.Second):
		t.Fatal("the -purged stream printed nothing for the purge")
	}

	out, code = cli(t, url, olga, "job", "purged", "-json")
	must.Eq(t, 0, code, must.Sprint(out))
	var records []struct {
		ID, JobID, Reason string
		Actor             struct{ Name string }
	}
	must.NoError(t, json.Unmarshal([]byte(out), &records))
	must.Len(t, 1, records)
	must.Eq(t, "example", records[0].JobID)
	must.Eq(t, "olga", records[0].Actor.Name)
	must.Eq(t, "purge", records[0].Reason)

	out, code = cli(t, url, alice, "job", "restore", "-yes", records[0].ID)
	must.Eq(t, 0, code, must.Sprint(out))
	out, code = cli(t, url, alice, "job", "status", "example")
	must.Eq(t, 0, code, must.Sprint(out))
	must.False(t, strings.Contains(out, "dead (stopped)"))
}
