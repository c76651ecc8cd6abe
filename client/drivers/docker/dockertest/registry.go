package dockertest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
	"golang.org/x/crypto/bcrypt"
)

// RegistryBinary is the registry Debian's docker-registry package installs.
const RegistryBinary = "docker-registry"

// RegistryOptions choose how a test registry serves.
type RegistryOptions struct {
	// TLS serves HTTPS with a certificate of a CA made for the test; the engine is told to
	// trust it through /etc/docker/certs.d/<addr>/ca.crt.
	TLS bool
	// Username and Password, when set, are the one htpasswd account the registry accepts
	// (the registry allows htpasswd only with TLS).
	Username, Password string
	// Host is the address the registry listens on, 127.0.0.1 when empty. The engine allows
	// any registry on 127.0.0.0/8 without TLS checks; on another address (BridgeHost) it
	// verifies the certificate, so only there does the test CA in certs.d matter.
	Host string
	// Untrusted leaves the test CA out of the engine's certs.d.
	Untrusted bool
}

// Registry is a docker-registry of the test's own on a loopback port.
type Registry struct {
	// Addr is host:port, the prefix of the registry's image names.
	Addr string
	opts RegistryOptions
	http *http.Client
}

// StartRegistry starts a registry with its own config and storage under t.TempDir and stops
// it when the test ends. Without the binary the test fails where docker tests are required
// (CI, NOMAD_TEST_DOCKER) and is skipped elsewhere.
func StartRegistry(t testing.TB, opts RegistryOptions) *Registry {
	t.Helper()
	bin, err := exec.LookPath(RegistryBinary)
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("NOMAD_TEST_DOCKER") != "" {
			t.Fatalf("%s not found (apt-get install docker-registry): %v", RegistryBinary, err)
		}
		t.Skipf("%s not found: %v", RegistryBinary, err)
	}
	if (opts.Username != "") && !opts.TLS {
		t.Fatalf("the registry serves htpasswd auth only over TLS")
	}
	dir := t.TempDir()
	host := opts.Host
	if host == "" {
		host = "127.0.0.1"
	}
	addr := freeAddrOn(t, host)
	r := &Registry{Addr: addr, opts: opts, http: &http.Client{Timeout: 5 * time.Second}}

	var cfg strings.Builder
	fmt.Fprintf(&cfg, "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n",
		filepath.Join(dir, "data"), addr)
	if opts.TLS {
		caPEM, certPEM, keyPEM := makeCerts(t, host)
		must.NoError(t, os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o600))
		must.NoError(t, os.WriteFile(filepath.Join(dir, "key.pem"), keyPEM, 0o600))
		fmt.Fprintf(&cfg, "  tls:\n    certificate: %s\n    key: %s\n", filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		r.http.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		if !opts.Untrusted {
			trustCA(t, addr, caPEM)
		}
	}
	if opts.Username != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(opts.Password), bcrypt.MinCost)
		must.NoError(t, err)
		must.NoError(t, os.WriteFile(filepath.Join(dir, "htpasswd"), []byte(opts.Username+":"+string(hash)+"\n"), 0o600))
		fmt.Fprintf(&cfg, "auth:\n  htpasswd:\n    realm: nomadfork-test\n    path: %s\n", filepath.Join(dir, "htpasswd"))
	}
	cfgPath := filepath.Join(dir, "config.yml")
	must.NoError(t, os.WriteFile(cfgPath, []byte(cfg.String()), 0o600))

	var out syncBuffer
	cmd := exec.Command(bin, "serve", cfgPath)
	cmd.Stdout, cmd.Stderr = &out, &out
	must.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	must.Wait(t, wait.InitialSuccess(
		wait.ErrorFunc(func() error {
			select {
			case <-exited:
				return fmt.Errorf("the registry exited")
			default:
			}
			resp, err := r.http.Get(r.URL() + "/v2/")
			if err != nil {
				return err
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnauthorized {
				return fmt.Errorf("registry answered %s", resp.Status)
			}
			return nil
		}),
		wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond),
	), must.Func(func() string { return "registry output:\n" + out.String() }))
	return r
}

// URL is the registry's base URL.
func (r *Registry) URL() string {
	if r.opts.TLS {
		return "https://" + r.Addr
	}
	return "http://" + r.Addr
}

// Auth is the registry's account as the engine's API takes it (nil without one).
func (r *Registry) Auth() *registry.AuthConfig {
	if r.opts.Username == "" {
		return nil
	}
	return &registry.AuthConfig{Username: r.opts.Username, Password: r.opts.Password, ServerAddress: r.Addr}
}

// Push tags the local image src as <addr>/<repoTag>, pushes it, and removes that tag from
// the engine again so that the node does not have the image by that name. It returns the
// pushed name.
func (r *Registry) Push(t testing.TB, cli *client.Client, src, repoTag string) string {
	t.Helper()
	ref := r.Addr + "/" + repoTag
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	must.NoError(t, cli.ImageTag(ctx, src, ref))
	var enc string
	if a := r.Auth(); a != nil {
		var err error
		enc, err = registry.EncodeAuthConfig(*a)
		must.NoError(t, err)
	}
	rc, err := cli.ImagePush(ctx, ref, image.PushOptions{RegistryAuth: enc})
	must.NoError(t, err)
	body, err := io.ReadAll(rc)
	_ = rc.Close()
	must.NoError(t, err)
	must.StrNotContains(t, string(body), `"error"`)
	RemoveImage(t, cli, ref)
	return ref
}

// RemoveImage removes the tag ref from the engine if it has it.
func RemoveImage(t testing.TB, cli *client.Client, ref string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cli.ImageRemove(ctx, ref, image.RemoveOptions{}); err != nil && !client.IsErrNotFound(err) {
		t.Fatalf("removing image %s: %v", ref, err)
	}
}

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr(t testing.TB) string { return freeAddrOn(t, "127.0.0.1") }

func freeAddrOn(t testing.TB, host string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	must.NoError(t, err)
	addr := l.Addr().String()
	must.NoError(t, l.Close())
	return addr
}

// FreeAddr is a loopback address nothing listens on, for an unreachable registry.
func FreeAddr(t testing.TB) string { return freeAddr(t) }

// trustCA puts the test CA where the engine looks for a registry's CA, and removes it after.
func trustCA(t testing.TB, addr string, caPEM []byte) {
	t.Helper()
	dir := filepath.Join("/etc/docker/certs.d", addr)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		// Loopback registries are insecure-allowed by the engine's default, so the pull
		// still works; only the CA check is not exercised.
		t.Logf("cannot install the test CA for the engine (%v); relying on the loopback insecure default", err)
		return
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	must.NoError(t, os.WriteFile(filepath.Join(dir, "ca.crt"), caPEM, 0o644))
}

// BridgeHost is the engine's default bridge gateway: an address of this host outside
// 127.0.0.0/8 that only the host and its containers reach.
func BridgeHost(t testing.TB, cli *client.Client) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nw, err := cli.NetworkInspect(ctx, "bridge", network.InspectOptions{})
	must.NoError(t, err)
	addrs, err := net.InterfaceAddrs()
	must.NoError(t, err)
	for _, c := range nw.IPAM.Config {
		if ip := net.ParseIP(c.Gateway); ip != nil && ip.To4() != nil {
			return c.Gateway
		}
		// The engine does not always record the gateway: it is this host's address in the
		// bridge's subnet.
		_, subnet, err := net.ParseCIDR(c.Subnet)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && subnet.Contains(ipn.IP) {
				return ipn.IP.String()
			}
		}
	}
	t.Fatalf("no address of this host on the engine's bridge network")
	return ""
}

// makeCerts makes a CA and a server certificate for host (an IP) signed by it.
func makeCerts(t testing.TB, host string) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nomadfork test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	must.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP(host)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	must.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// syncBuffer collects a process's output written from its own goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ProxyOptions choose how a Proxy misbehaves.
type ProxyOptions struct {
	// Gate holds every manifest request until Release, so that a test can line up pulls.
	Gate bool
	// RejectCredentials answers the first ping with a basic-auth challenge and every request
	// that carries credentials with 401, and serves anonymous requests: a registry where
	// anonymous pulls work and the credentials given are wrong (as a public image with a
	// stale password).
	RejectCredentials bool
}

// Proxy is a plain-HTTP front of a plain-HTTP registry on its own loopback port. Images are
// named by its Addr; pushes go to the registry itself.
type Proxy struct {
	Addr string
	gate chan struct{}
	once sync.Once

	mu    sync.Mutex
	pings int
	// Manifests counts the manifest requests that reached the registry.
	manifests int
}

// StartProxy serves a front of r until the test ends.
func StartProxy(t testing.TB, r *Registry, opts ProxyOptions) *Proxy {
	t.Helper()
	must.False(t, r.opts.TLS)
	target, err := url.Parse(r.URL())
	must.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	// A request the engine abandons (a cancelled pull) is expected here, not news.
	rp.ErrorLog = log.New(io.Discard, "", 0)
	p := &Proxy{gate: make(chan struct{})}
	if !opts.Gate {
		p.Release()
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if opts.RejectCredentials {
			p.mu.Lock()
			first := req.URL.Path == "/v2/" && p.pings == 0
			if req.URL.Path == "/v2/" {
				p.pings++
			}
			p.mu.Unlock()
			if first || req.Header.Get("Authorization") != "" {
				w.Header().Set("WWW-Authenticate", `Basic realm="nomadfork-test"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}`)
				return
			}
		}
		if strings.Contains(req.URL.Path, "/manifests/") {
			select {
			case <-p.gate:
			case <-req.Context().Done():
				return
			}
			p.mu.Lock()
			p.manifests++
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, req)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	p.Addr = l.Addr().String()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(l) }()
	t.Cleanup(func() {
		p.Release()
		_ = srv.Close()
		<-served
	})
	return p
}

// Release lets held manifest requests through, and every later one.
func (p *Proxy) Release() { p.once.Do(func() { close(p.gate) }) }

// Manifests is how many manifest requests reached the registry.
func (p *Proxy) Manifests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.manifests
}
