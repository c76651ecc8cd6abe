package template

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/consul-template/renderer"
	"github.com/nomadfork/nomad/client/allocdir"
)

// confined is p (relative to root, or absolute) relative to root, refusing one that leaves
// root by "..". Links are checked when the file is opened, through os.Root.
func confined(root, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return allocdir.Rel(root, p)
}

// resolve turns a template's source or destination into an absolute path under root (the
// allocation's directory). A relative path is the task directory's; an absolute one already
// under root stays; any other absolute path is read as an exec or docker task sees its
// files: /alloc/... is the allocation's shared directory, anything else the task's.
func resolve(root, taskDir, p string) (string, error) {
	switch {
	case !filepath.IsAbs(p):
		p = filepath.Join(taskDir, p)
	case underRoot(root, p):
	case p == "/alloc" || strings.HasPrefix(p, "/alloc/"):
		p = filepath.Join(root, p)
	default:
		p = filepath.Join(taskDir, p)
	}
	if _, err := allocdir.Rel(root, p); err != nil {
		return "", err
	}
	return p, nil
}

func underRoot(root, p string) bool {
	_, err := allocdir.Rel(root, p)
	return err == nil
}

// renderFunc writes rendered templates under root only. It replaces consul-template's
// renderer, which follows any link and would write wherever a destination points. A
// destination in once is written the first time only (a template with once = true): later
// renders leave it, and so report no change to apply.
func renderFunc(root string, once map[string]bool) renderer.Renderer {
	var mu sync.Mutex
	written := map[string]bool{}
	return func(in *renderer.RenderInput) (*renderer.RenderResult, error) {
		rel, err := confined(root, in.Path)
		if err != nil {
			return nil, fmt.Errorf("template destination: %w", err)
		}
		mu.Lock()
		done := written[in.Path]
		mu.Unlock()
		if done {
			return &renderer.RenderResult{WouldRender: true, Contents: in.Contents}, nil
		}
		// Marked once in place, so a failed write is tried again.
		wrote := func() {
			if once[in.Path] {
				mu.Lock()
				written[in.Path] = true
				mu.Unlock()
			}
		}
		r, err := os.OpenRoot(root)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		if old, err := r.ReadFile(rel); err == nil && bytes.Equal(old, in.Contents) {
			wrote()
			return &renderer.RenderResult{WouldRender: true, Contents: in.Contents}, nil
		}
		if dir := filepath.Dir(rel); dir != "." {
			if err := r.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("template destination: %w", err)
			}
		}
		// Written aside and renamed, so the task never reads half a file; the rename
		// replaces a link at the destination rather than following it.
		tmp := rel + ".tmp"
		perms := in.Perms
		if perms == 0 {
			perms = 0o644
		}
		f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perms)
		if err != nil {
			return nil, fmt.Errorf("template destination: %w", err)
		}
		_, werr := f.Write(in.Contents)
		if werr == nil {
			werr = f.Chmod(perms)
		}
		if werr == nil && (in.User != "" || in.Group != "") {
			werr = chown(f, in.User, in.Group)
		}
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = r.Rename(tmp, rel)
		}
		if werr != nil {
			_ = r.Remove(tmp)
			return nil, fmt.Errorf("template destination: %w", werr)
		}
		wrote()
		return &renderer.RenderResult{DidRender: true, WouldRender: true, Contents: in.Contents}, nil
	}
}

// chown applies a template's uid and gid, carried as decimal strings in consul-template's
// User and Group (-1 keeps the file's).
func chown(f *os.File, user, group string) error {
	id := func(s string) (int, error) {
		if s == "" {
			return -1, nil
		}
		return strconv.Atoi(s)
	}
	uid, err := id(user)
	if err != nil {
		return fmt.Errorf("uid %q: %w", user, err)
	}
	gid, err := id(group)
	if err != nil {
		return fmt.Errorf("gid %q: %w", group, err)
	}
	if uid == -1 && gid == -1 {
		return nil
	}
	return f.Chown(uid, gid)
}

// readFunc reads a template's source under root only, refusing links that lead outside.
func readFunc(root string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		rel, err := confined(root, p)
		if err != nil {
			return nil, fmt.Errorf("template source: %w", err)
		}
		r, err := os.OpenRoot(root)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		b, err := r.ReadFile(rel)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("template source %s: not found", p)
			}
			return nil, fmt.Errorf("template source: %w", err)
		}
		return b, nil
	}
}

// parseEnvFile reads a rendered env template: KEY=VALUE lines, blank lines and # comments
// skipped, an optional "export " prefix, and values optionally in single or double quotes.
func parseEnvFile(b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			// The line itself may hold a secret: only its number is reported.
			return nil, fmt.Errorf("env template line %d is not KEY=VALUE", n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"') {
			uq, err := strconv.Unquote(v)
			if err != nil {
				return nil, fmt.Errorf("env template line %d: bad quoting", n)
			}
			v = uq
		} else if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	return out, sc.Err()
}
