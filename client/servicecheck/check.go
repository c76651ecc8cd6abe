// Package servicecheck runs the health checks of an allocation's `provider = "nomad"`
// services on the client: http, tcp and script checks, each in its own goroutine owned by the
// allocation's Runner, with their latest results kept for the API, for deployment health and
// for check_restart.
package servicecheck

import (
	"context"
	"crypto/md5"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Check types run by the client.
const (
	TypeHTTP   = "http"
	TypeTCP    = "tcp"
	TypeScript = "script"
)

// on_update values, as upstream.
const (
	OnUpdateRequireHealthy = "require_healthy"
	OnUpdateIgnoreWarnings = "ignore_warnings"
	OnUpdateIgnore         = "ignore"
)

// Statuses and modes of the API's AllocCheckStatus. Upstream's Nomad checks know success,
// failure and pending; a script check that exits 1 is a warning, which only script checks
// give.
const (
	StatusPending = "pending"
	StatusSuccess = "success"
	StatusFailure = "failure"
	StatusWarning = "warning"

	ModeHealthiness = "healthiness"
	ModeReadiness   = "readiness"
)

// Restart is a check's check_restart: after Limit consecutive unhealthy results, once Grace
// has passed since the check started, the task is restarted.
type Restart struct {
	Limit          int
	Grace          time.Duration
	IgnoreWarnings bool
}

// Spec is one check to run, resolved against its allocation (address, port, task).
type Spec struct {
	// ID is stable for the same check of the same allocation (CheckID).
	ID      string
	Name    string
	Service string
	// Group is the allocation's name (job.group[index]), Task the task owning the service
	// ("" for a group's service), as the API shows them.
	Group string
	Task  string
	Type  string

	Address  string
	Port     int
	Protocol string
	Path     string
	Method   string
	Header   map[string][]string
	Body     string
	// TLSSkipVerify and TLSServerName apply to protocol https.
	TLSSkipVerify bool
	TLSServerName string

	Command string
	Args    []string
	// ExecTask is the task a script check runs in, and the one check_restart restarts.
	ExecTask string

	Interval      time.Duration
	Timeout       time.Duration
	InitialStatus string
	OnUpdate      string
	Restart       *Restart
}

// CheckID derives a check's ID from what names it within its allocation, hex as upstream.
func CheckID(allocID, owner, service, check string) string {
	sum := md5.Sum([]byte(allocID + "\x00" + owner + "\x00" + service + "\x00" + check))
	return hex.EncodeToString(sum[:])
}

// Mode is the check's mode: a check with on_update "ignore" says whether the service is
// ready, not whether it is healthy, and takes no part in deployment health.
func (s *Spec) Mode() string {
	if s.OnUpdate == OnUpdateIgnore {
		return ModeReadiness
	}
	return ModeHealthiness
}

// initialStatus is what the check shows before its first result.
func (s *Spec) initialStatus() string {
	switch s.InitialStatus {
	case "passing":
		return StatusSuccess
	case "warning":
		return StatusWarning
	case "critical":
		return StatusFailure
	}
	return StatusPending
}

// maxOutput bounds what a check keeps of a response body or a script's output.
const maxOutput = 4 << 10

// Exec runs a command in a running task and returns its exit code; output receives what it
// writes to stdout and stderr.
type Exec func(ctx context.Context, task string, command []string, output io.Writer) (int, error)

// result is one run of a check.
type result struct {
	status string
	code   int
	output string
}

// run runs the check once, bounded by its timeout; hc is the check's HTTP client (httpClient).
func (s *Spec) run(ctx context.Context, exec Exec, hc *http.Client) result {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	switch s.Type {
	case TypeHTTP:
		return s.runHTTP(ctx, hc)
	case TypeTCP:
		return s.runTCP(ctx)
	case TypeScript:
		return s.runScript(ctx, exec)
	}
	return result{status: StatusFailure, output: fmt.Sprintf("nomad: check type %q is not supported", s.Type)}
}

func (s *Spec) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return 10 * time.Second
}

func (s *Spec) hostPort() string {
	return net.JoinHostPort(s.Address, strconv.Itoa(s.Port))
}

func (s *Spec) runTCP(ctx context.Context) result {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.hostPort())
	if err != nil {
		return result{status: StatusFailure, output: "nomad: " + err.Error()}
	}
	_ = conn.Close()
	return result{status: StatusSuccess, output: "nomad: tcp ok"}
}

// httpClient is the client of one http check, kept for its life. It opens one connection
// per run: a check says whether the service accepts connections now, which a kept-alive one
// would hide.
func (s *Spec) httpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: s.TLSSkipVerify, ServerName: s.TLSServerName}, //nolint:gosec // the job asks for it
	}}
}

func (s *Spec) runHTTP(ctx context.Context, client *http.Client) result {
	scheme := s.Protocol
	if scheme == "" {
		scheme = "http"
	}
	path := s.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	method := s.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if s.Body != "" {
		body = strings.NewReader(s.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, scheme+"://"+s.hostPort()+path, body)
	if err != nil {
		return result{status: StatusFailure, output: "nomad: " + err.Error()}
	}
	for k, vs := range s.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return result{status: StatusFailure, output: "nomad: http check timed out after " + s.timeout().String()}
		}
		return result{status: StatusFailure, output: "nomad: " + err.Error()}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxOutput))
	r := result{code: resp.StatusCode}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		r.status, r.output = StatusSuccess, "nomad: http ok"
	} else {
		r.status = StatusFailure
		r.output = "nomad: http status " + resp.Status
		if len(raw) > 0 {
			r.output += ": " + string(raw)
		}
	}
	return r
}

// limitedBuffer keeps the first maxOutput bytes written to it.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxOutput - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (s *Spec) runScript(ctx context.Context, exec Exec) result {
	if exec == nil || s.ExecTask == "" {
		return result{status: StatusFailure, output: "nomad: no task to run the script check in"}
	}
	var out limitedBuffer
	code, err := exec(ctx, s.ExecTask, append([]string{s.Command}, s.Args...), &out)
	if err != nil {
		if ctx.Err() != nil {
			return result{status: StatusFailure, output: "nomad: script check timed out after " + s.timeout().String()}
		}
		return result{status: StatusFailure, output: "nomad: " + err.Error()}
	}
	r := result{code: code, output: string(out.b)}
	switch code {
	case 0:
		r.status = StatusSuccess
	case 1:
		r.status = StatusWarning
	default:
		r.status = StatusFailure
	}
	return r
}
