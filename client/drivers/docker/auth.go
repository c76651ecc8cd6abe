package docker

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/docker/docker/api/types/registry"
)

// helperTimeout bounds one run of a credential helper.
const helperTimeout = 30 * time.Second

// dockerHubAuthKey is the key docker's CLI files Docker Hub's credentials under.
const dockerHubAuthKey = "https://index.docker.io/v1/"

// registryAuth picks the credentials for the task's image: the task's auth block, else the
// plugin's config.json (auths, credHelpers, credsStore), else the plugin's helper, else none.
// Errors name the source and the registry, never a credential.
func (d *Driver) registryAuth(c *taskConfig) (*registry.AuthConfig, error) {
	if c.Auth != nil {
		return c.Auth, nil
	}
	if d.opts.AuthConfig == "" && d.opts.AuthHelper == "" {
		return nil, nil
	}
	host := registryHost(c.Image)
	if d.opts.AuthConfig != "" {
		a, err := authFromConfigFile(d.opts.AuthConfig, host)
		if err != nil {
			return nil, err
		}
		if a != nil {
			return a, nil
		}
	}
	if d.opts.AuthHelper != "" {
		return authFromHelper(d.opts.AuthHelper, host)
	}
	return nil, nil
}

// registryHost is the registry an image is pulled from ("docker.io" for Docker Hub).
func registryHost(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ""
	}
	return reference.Domain(named)
}

// normalizeHost reduces a config.json key ("https://host/v1/", "host") to the host.
func normalizeHost(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	switch s {
	case "index.docker.io", "registry-1.docker.io":
		return "docker.io"
	}
	return s
}

// dockerConfig is the part of docker's config.json that holds credentials.
type dockerConfig struct {
	Auths map[string]struct {
		Auth          string `json:"auth"`
		Username      string `json:"username"`
		Password      string `json:"password"`
		IdentityToken string `json:"identitytoken"`
	} `json:"auths"`
	CredHelpers map[string]string `json:"credHelpers"`
	CredsStore  string            `json:"credsStore"`
}

// authFromConfigFile reads the credentials for host from a docker config.json: a helper
// named for the registry wins, then the stored credentials, then the default store.
func authFromConfigFile(path, host string) (*registry.AuthConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("docker: plugin auth config: %w", err)
	}
	var cfg dockerConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		// The decoder's error may quote the file's content, which holds secrets.
		return nil, fmt.Errorf("docker: plugin auth config %q is not valid JSON", path)
	}
	for k, helper := range cfg.CredHelpers {
		if normalizeHost(k) == host {
			return authFromHelper(helper, host)
		}
	}
	for k, e := range cfg.Auths {
		if normalizeHost(k) != host {
			continue
		}
		a := &registry.AuthConfig{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken, ServerAddress: k}
		if e.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(e.Auth)
			user, pass, ok := strings.Cut(string(raw), ":")
			if err != nil || !ok {
				return nil, fmt.Errorf("docker: plugin auth config %q: the auth entry for %q is not base64 of user:password", path, k)
			}
			a.Username, a.Password = user, pass
		}
		return a, nil
	}
	if cfg.CredsStore != "" {
		return authFromHelper(cfg.CredsStore, host)
	}
	return nil, nil
}

// authFromHelper asks docker-credential-<helper> for host's credentials with the helpers'
// protocol: `get`, the server URL on stdin, {"Username","Secret"} on stdout. A helper that
// has none is not an error: the pull goes on without credentials.
func authFromHelper(helper, host string) (*registry.AuthConfig, error) {
	bin := "docker-credential-" + helper
	server := host
	if host == "docker.io" {
		server = dockerHubAuthKey
	}
	ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "get")
	cmd.Stdin = strings.NewReader(server)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stdout.String()+stderr.String(), "credentials not found") {
			return nil, nil
		}
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			// Its output is not quoted: a helper may print what it read.
			return nil, fmt.Errorf("docker: credential helper %s failed for %q: exit code %d", bin, server, exitErr.ExitCode())
		}
		return nil, fmt.Errorf("docker: credential helper %s for %q: %w", bin, server, err)
	}
	var out struct {
		Username string
		Secret   string
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("docker: credential helper %s for %q did not answer JSON {Username, Secret}", bin, server)
	}
	a := &registry.AuthConfig{ServerAddress: server}
	// The helpers' convention: "<token>" as the user name means Secret is an identity token.
	if out.Username == "<token>" {
		a.IdentityToken = out.Secret
	} else {
		a.Username, a.Password = out.Username, out.Secret
	}
	return a, nil
}
