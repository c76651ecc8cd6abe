// Package artifact downloads a task's `artifact` blocks into its allocation with
// hashicorp/go-getter, as upstream does: http(s) with checksums, headers and archives
// unpacked, and git when the node has it.
//
// A job's author chooses the source and the destination, and the agent downloads as its own
// user, so both are bounded here. Only http, https and git sources are fetched: go-getter's
// file getter would copy any file of the host into the task. Every download lands first in a
// fresh directory the task cannot reach, with symbolic links refused, and is then moved into
// place through an os.Root on the allocation directory, so no `..` and no link a task planted
// leads a write outside the allocation. Sizes, file counts and read stalls have limits (the
// client's `artifact {}` block).
package artifact

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-cleanhttp"
	getter "github.com/hashicorp/go-getter/v2"
	"github.com/hashicorp/nomad/api"
)

// Config is the client's `artifact {}` block.
type Config struct {
	// HTTPReadTimeout ends an http(s) download whose body stalls this long.
	HTTPReadTimeout time.Duration
	// HTTPMaxSize is the most bytes one http(s) download may bring.
	HTTPMaxSize int64
	// GitTimeout bounds a git clone.
	GitTimeout time.Duration
	// DecompressionFileCountLimit and DecompressionSizeLimit bound what an archive unpacks to.
	DecompressionFileCountLimit int
	DecompressionSizeLimit      int64
}

// DefaultConfig holds upstream's defaults.
func DefaultConfig() Config {
	return Config{
		HTTPReadTimeout:             30 * time.Minute,
		HTTPMaxSize:                 100 << 30,
		GitTimeout:                  30 * time.Minute,
		DecompressionFileCountLimit: 4096,
		DecompressionSizeLimit:      100 << 30,
	}
}

// Fetcher downloads artifacts with one Config.
type Fetcher struct {
	cfg Config
	// gitPath is the git binary, "" when the node has none (git sources are then refused).
	gitPath string
}

// New returns a Fetcher; zero fields of cfg take the defaults.
func New(cfg Config) *Fetcher {
	def := DefaultConfig()
	if cfg.HTTPReadTimeout <= 0 {
		cfg.HTTPReadTimeout = def.HTTPReadTimeout
	}
	if cfg.HTTPMaxSize <= 0 {
		cfg.HTTPMaxSize = def.HTTPMaxSize
	}
	if cfg.GitTimeout <= 0 {
		cfg.GitTimeout = def.GitTimeout
	}
	if cfg.DecompressionFileCountLimit <= 0 {
		cfg.DecompressionFileCountLimit = def.DecompressionFileCountLimit
	}
	if cfg.DecompressionSizeLimit <= 0 {
		cfg.DecompressionSizeLimit = def.DecompressionSizeLimit
	}
	git, _ := exec.LookPath("git")
	return &Fetcher{cfg: cfg, gitPath: git}
}

// Request is one artifact of a task.
type Request struct {
	Artifact *api.TaskArtifact
	// AllocDir is the allocation's directory (the task directories and alloc/ are in it);
	// nothing is written outside it.
	AllocDir string
	// TaskName is the task's directory under AllocDir, which a destination is relative to.
	TaskName string
	// Replace interpolates ${...} in the source, options, headers and destination.
	Replace func(string) string
	// Owner, when set, owns what is placed (the artifact's chown = true, for the task's
	// user); nil leaves it the agent's.
	Owner *Owner
}

// Owner is a numeric user and group.
type Owner struct {
	UID, GID int
}

// Fetch downloads one artifact into its destination.
func (f *Fetcher) Fetch(ctx context.Context, r Request) error {
	a := r.Artifact
	if a == nil || a.GetterSource == nil || *a.GetterSource == "" {
		return errors.New("artifact has no source")
	}
	replace := r.Replace
	if replace == nil {
		replace = func(s string) string { return s }
	}
	src, forcedGit, err := f.source(replace(*a.GetterSource), a, replace)
	if err != nil {
		return err
	}
	mode, err := getMode(a.GetterMode)
	if err != nil {
		return err
	}
	dest, err := destination(a, mode, r.TaskName, replace)
	if err != nil {
		return err
	}

	root, err := os.OpenRoot(r.AllocDir)
	if err != nil {
		return fmt.Errorf("artifact: opening the allocation directory: %w", err)
	}
	defer root.Close()
	// The download's own directory sits beside the task directories, where no task's
	// filesystem reaches, and holds no link a task could have planted.
	tmp, err := os.MkdirTemp(r.AllocDir, ".artifact-")
	if err != nil {
		return fmt.Errorf("artifact: %w", err)
	}
	defer os.RemoveAll(tmp)
	got := filepath.Join(tmp, "got")

	if forcedGit {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.cfg.GitTimeout)
		defer cancel()
	}
	client := &getter.Client{
		Getters:         f.getters(a, replace),
		Decompressors:   getter.LimitedDecompressors(f.cfg.DecompressionFileCountLimit, f.cfg.DecompressionSizeLimit),
		DisableSymlinks: true,
	}
	if _, err := client.Get(ctx, &getter.Request{Src: src, Dst: got, Pwd: tmp, GetMode: mode, DisableSymlinks: true}); err != nil {
		return fmt.Errorf("downloading artifact %s: %s", redact(src), redactErr(err, src))
	}
	tmpRel, err := filepath.Rel(r.AllocDir, got)
	if err != nil {
		return err
	}
	return place(root, tmpRel, dest, r.Owner)
}

// source checks the artifact's source and returns it with the artifact's options as its
// query, as go-getter reads them (checksum, archive, ref, depth, sshkey...).
func (f *Fetcher) source(src string, a *api.TaskArtifact, replace func(string) string) (string, bool, error) {
	forced := ""
	rest := src
	if i := strings.Index(src, "::"); i > 0 && !strings.Contains(src[:i], "/") {
		forced, rest = src[:i], src[i+2:]
	}
	git := false
	switch forced {
	case "":
		u, err := url.Parse(rest)
		switch {
		case err == nil && (u.Scheme == "http" || u.Scheme == "https"):
		case err == nil && u.Scheme == "git", strings.HasPrefix(rest, "git@"),
			strings.HasPrefix(rest, "github.com/"), strings.HasPrefix(rest, "gitlab.com/"), strings.HasPrefix(rest, "bitbucket.org/"):
			git = true
		case err == nil && u.Scheme != "":
			return "", false, fmt.Errorf("artifact source %s: scheme %q is not supported (http, https and git are)", redact(src), u.Scheme)
		default:
			// A bare path would be go-getter's file getter: a copy of the host's files.
			return "", false, fmt.Errorf("artifact source %s: a local path is not allowed (http, https and git sources are)", redact(src))
		}
	case "http", "https":
	case "git":
		git = true
	default:
		return "", false, fmt.Errorf("artifact source %s: getter %q is not supported (http, https and git are)", redact(src), forced)
	}
	if git && f.gitPath == "" {
		return "", false, fmt.Errorf("artifact source %s: git is not installed on this node", redact(src))
	}
	if git && a.GetterInsecure != nil && *a.GetterInsecure {
		return "", false, fmt.Errorf("artifact source %s: insecure is only supported for http(s) sources", redact(src))
	}
	if len(a.GetterOptions) > 0 {
		u, err := url.Parse(rest)
		if err != nil {
			return "", false, fmt.Errorf("artifact source %s: %v", redact(src), err)
		}
		q := u.Query()
		for k, v := range a.GetterOptions {
			q.Set(k, replace(v))
		}
		u.RawQuery = q.Encode()
		rest = u.String()
	}
	if forced != "" {
		return forced + "::" + rest, git, nil
	}
	return rest, git, nil
}

func (f *Fetcher) getters(a *api.TaskArtifact, replace func(string) string) []getter.Getter {
	transport := cleanhttp.DefaultPooledTransport()
	if a.GetterInsecure != nil && *a.GetterInsecure {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the job asked for it with insecure = true
	}
	header := http.Header{}
	for k, v := range a.GetterHeaders {
		header.Set(k, replace(v))
	}
	gs := []getter.Getter{&getter.HttpGetter{
		// go-getter's own MaxBytes cuts a body short without an error when the server
		// sends no Content-Length; the transport fails the download instead.
		Client:      &http.Client{Transport: &maxBodyTransport{next: transport, max: f.cfg.HTTPMaxSize}},
		Header:      header,
		ReadTimeout: f.cfg.HTTPReadTimeout,
		// An answer's X-Terraform-Get header would send the download to any source,
		// the file getter's included.
		XTerraformGetDisabled: true,
	}}
	if f.gitPath != "" {
		gs = append(gs, &getter.GitGetter{Timeout: f.cfg.GitTimeout})
	}
	return gs
}

// errTooLarge fails a download past http_max_size.
var errTooLarge = errors.New("the artifact is larger than the client's artifact.http_max_size")

// maxBodyTransport fails every response body that goes past max bytes.
type maxBodyTransport struct {
	next http.RoundTripper
	max  int64
}

func (t *maxBodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, errTooLarge
	}
	resp.Body = &maxBody{ReadCloser: resp.Body, left: t.max}
	return resp, nil
}

type maxBody struct {
	io.ReadCloser
	left int64
}

func (b *maxBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	// One byte past the limit is read to tell a body of exactly max bytes from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

func getMode(m *string) (getter.Mode, error) {
	if m == nil {
		return getter.ModeAny, nil
	}
	switch *m {
	case "", "any":
		return getter.ModeAny, nil
	case "file":
		return getter.ModeFile, nil
	case "dir":
		return getter.ModeDir, nil
	}
	return getter.ModeInvalid, fmt.Errorf("artifact mode %q: want any, file or dir", *m)
}

// destination is where the artifact goes, relative to the allocation directory: the
// artifact's destination relative to the task directory, which may reach the shared alloc/
// directory through "../alloc" as upstream allows, never further.
func destination(a *api.TaskArtifact, mode getter.Mode, task string, replace func(string) string) (string, error) {
	d := "local/"
	if a.RelativeDest != nil && *a.RelativeDest != "" {
		d = replace(*a.RelativeDest)
	} else if mode == getter.ModeFile && a.GetterSource != nil {
		d = path.Join("local", path.Base(*a.GetterSource))
	}
	if filepath.IsAbs(d) {
		return "", fmt.Errorf("artifact destination %q must be relative to the task directory", d)
	}
	rel := filepath.Clean(filepath.Join(task, d))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("artifact destination %q leaves the allocation directory", d)
	}
	return rel, nil
}

// place moves what was downloaded at tmpRel to dest, both relative to root. A file replaces
// a file of its name; a directory's entries join the destination directory's.
func place(root *os.Root, tmpRel, dest string, owner *Owner) error {
	info, err := root.Lstat(tmpRel)
	if err != nil {
		return fmt.Errorf("artifact: the download left nothing: %w", err)
	}
	if !info.IsDir() {
		if err := root.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return fmt.Errorf("artifact destination: %w", err)
		}
		if err := chown(root, tmpRel, owner); err != nil {
			return err
		}
		return moveFile(root, tmpRel, dest)
	}
	return fs.WalkDir(root.FS(), tmpRel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tmpRel, p)
		target := filepath.Join(dest, rel)
		switch {
		case d.IsDir():
			if err := root.MkdirAll(target, 0o755); err != nil {
				return fmt.Errorf("artifact destination: %w", err)
			}
			if rel == "." {
				// The destination itself may be the task's own local/, which stays as it is.
				return nil
			}
			return chown(root, target, owner)
		case d.Type().IsRegular():
			if err := chown(root, p, owner); err != nil {
				return err
			}
			return moveFile(root, p, target)
		default:
			// The getter was told to refuse links; anything else special is not copied.
			return fmt.Errorf("artifact: %s is not a regular file", rel)
		}
	})
}

// chown gives p to owner, when there is one; links are never followed (Lchown).
func chown(root *os.Root, p string, owner *Owner) error {
	if owner == nil {
		return nil
	}
	if err := root.Lchown(p, owner.UID, owner.GID); err != nil {
		return fmt.Errorf("artifact chown: %w", err)
	}
	return nil
}

func moveFile(root *os.Root, from, to string) error {
	if info, err := root.Lstat(to); err == nil && info.IsDir() {
		return fmt.Errorf("artifact destination %s is a directory", to)
	}
	if err := root.Rename(from, to); err != nil {
		return fmt.Errorf("artifact destination: %w", err)
	}
	return nil
}

// redact drops a source's user information and query (tokens, signed URLs, checksums),
// which may be secrets, from what an event or a log shows.
func redact(src string) string {
	forced := ""
	if i := strings.Index(src, "::"); i > 0 && !strings.Contains(src[:i], "/") {
		forced, src = src[:i+2], src[i+2:]
	}
	u, err := url.Parse(src)
	if err != nil || u.Host == "" {
		if i := strings.IndexAny(src, "?#"); i >= 0 {
			src = src[:i]
		}
		return forced + src
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return forced + u.String()
}

// redactErr is err's text with the full source replaced by its redacted form.
func redactErr(err error, src string) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, src, redact(src))
	if i := strings.Index(src, "::"); i > 0 {
		msg = strings.ReplaceAll(msg, src[i+2:], redact(src[i+2:]))
	}
	return msg
}
