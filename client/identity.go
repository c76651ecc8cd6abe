package client

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/client/taskenv"
	"github.com/nomadfork/nomad/structs"
)

// A task's workload identities are fetched from the servers when the task is set up and
// handed to it as upstream does: an identity with file = true is written under the task's
// directory (secrets/nomad_token for the default one, secrets/nomad_<name>.jwt for a named
// one, or its filepath), one with env = true is set as NOMAD_TOKEN or NOMAD_TOKEN_<name>. An
// identity that asks for neither is not fetched at all. The JWTs are secrets: they are
// written to the task's files and environment only, never logged.

// identityFetchAttempts bounds the calls made for a task's identities before its setup fails.
const identityFetchAttempts = 5

// exposedIdentities are the identities of task that ask to be exposed.
func exposedIdentities(task *api.Task) []*api.WorkloadIdentity {
	var out []*api.WorkloadIdentity
	for _, id := range structs.TaskIdentities(task) {
		if id.Env || id.File {
			out = append(out, id)
		}
	}
	return out
}

// identityFile is where an identity's file goes, relative to the task directory.
func identityFile(id *api.WorkloadIdentity) string {
	if id.Filepath != "" {
		return filepath.Clean(id.Filepath)
	}
	if id.Name == structs.WorkloadIdentityDefaultName {
		return filepath.Join("secrets", "nomad_token")
	}
	return filepath.Join("secrets", "nomad_"+id.Name+".jwt")
}

// identityEnv is the environment variable of an identity.
func identityEnv(id *api.WorkloadIdentity) string {
	if id.Name == structs.WorkloadIdentityDefaultName {
		return "NOMAD_TOKEN"
	}
	return "NOMAD_TOKEN_" + id.Name
}

// setupIdentities fetches the task's exposed identities, writes their files under taskDir
// and adds their variables to env. A task with templates also gets its default identity,
// exposed or not: the templates' Nomad functions read the API with it. It returns that
// identity's JWT, empty when the task has no templates.
func (tr *taskRunner) setupIdentities(taskDir string, env *taskenv.Env) (string, error) {
	wanted := exposedIdentities(tr.task)
	forTemplates := len(tr.task.Templates) > 0
	if forTemplates && !slices.ContainsFunc(wanted, func(id *api.WorkloadIdentity) bool {
		return id.Name == structs.WorkloadIdentityDefaultName
	}) {
		wanted = append(wanted, &api.WorkloadIdentity{Name: structs.WorkloadIdentityDefaultName})
	}
	if len(wanted) == 0 {
		return "", nil
	}
	c := tr.ar.c
	args := &structs.AllocIdentitiesRequest{
		NodeID:       c.node.ID,
		QueryOptions: structs.QueryOptions{Region: c.config.Region, AuthToken: c.node.SecretID, AllowStale: true},
	}
	for _, id := range wanted {
		args.Identities = append(args.Identities, &structs.WorkloadIdentityRequest{
			AllocID: tr.alloc.ID, TaskName: tr.task.Name, IdentityName: id.Name,
		})
	}
	var reply structs.AllocIdentitiesResponse
	// A server may be unreachable for a moment (a leader election, a restart): a few tries
	// before the task fails its setup. A refusal (403) is final.
	for attempt := 1; ; attempt++ {
		reply = structs.AllocIdentitiesResponse{}
		err := c.servers.SignIdentities(args, &reply)
		if err == nil {
			break
		}
		var coded *structs.CodedError
		if attempt >= identityFetchAttempts || (errors.As(err, &coded) && coded.Code == 403) {
			return "", fmt.Errorf("fetching workload identities: %w", err)
		}
		t := time.NewTimer(c.config.RetryInterval)
		select {
		case <-t.C:
		case <-tr.killCh:
			t.Stop()
			return "", fmt.Errorf("fetching workload identities: %w", err)
		}
	}
	if len(reply.Rejections) > 0 {
		r := reply.Rejections[0]
		return "", fmt.Errorf("workload identity %q refused: %s", r.IdentityName, r.Reason)
	}
	byName := map[string]string{}
	for _, s := range reply.SignedIdentities {
		if s.AllocID == tr.alloc.ID && s.TaskName == tr.task.Name {
			byName[s.IdentityName] = s.JWT
		}
	}
	var templateToken string
	for _, id := range wanted {
		jwt, ok := byName[id.Name]
		if !ok || jwt == "" {
			return "", fmt.Errorf("workload identity %q: the servers signed none", id.Name)
		}
		if id.Name == structs.WorkloadIdentityDefaultName {
			templateToken = jwt
		}
		if id.Env {
			env.Set(identityEnv(id), jwt)
		}
		if id.File {
			if err := writeIdentityFile(taskDir, identityFile(id), jwt, tr.task.User); err != nil {
				return "", fmt.Errorf("workload identity %q: %w", id.Name, err)
			}
		}
	}
	return templateToken, nil
}

// writeIdentityFile writes a JWT at rel under taskDir, refusing a path that leaves it (every
// step goes through os.Root, so a link the task made cannot lead outside either). Without a
// task user the file is readable by all, protected by the task directory's permissions as
// upstream; with one it belongs to that user and only they read it.
func writeIdentityFile(taskDir, rel, jwt, taskUser string) error {
	if filepath.IsAbs(rel) {
		return fmt.Errorf("%w: %s is absolute", allocdir.ErrEscapes, rel)
	}
	path := filepath.Join(taskDir, rel)
	rel, err := allocdir.Rel(taskDir, path)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(taskDir)
	if err != nil {
		return err
	}
	defer root.Close()
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	mode := os.FileMode(0o644)
	uid, gid := -1, -1
	if taskUser != "" {
		mode = 0o600
		if u, err := user.Lookup(taskUser); err == nil {
			uid, _ = strconv.Atoi(u.Uid)
			gid, _ = strconv.Atoi(u.Gid)
		}
	}
	tmp := rel + ".tmp"
	f, err := root.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(jwt)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if uid >= 0 && os.Geteuid() == 0 {
		if err := root.Lchown(tmp, uid, gid); err != nil {
			_ = root.Remove(tmp)
			return err
		}
	}
	// Renamed into place so a task reading the file never sees half a token.
	return root.Rename(tmp, rel)
}
