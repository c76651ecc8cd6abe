package command

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// OperatorAPICommand sends one HTTP request to the agent with the CLI's address, token and
// TLS settings, like curl.
type OperatorAPICommand struct {
	Meta

	// Stdin is the request body; nil means os.Stdin when it is not a terminal.
	Stdin io.Reader
	// Stdout receives the response body as it came; nil means os.Stdout.
	Stdout  io.Writer
	method  string
	headers headerFlags
	filter  string
	dryrun  bool
	verbose bool
}

func (c *OperatorAPICommand) Help() string {
	return helpText(`
Usage: nomad operator api [options] <path>

  Send one request to the agent's HTTP API with the address, token, region,
  namespace and TLS settings every command uses (flags or NOMAD_*
  variables), and print the response body as it comes. <path> is an API path
  such as /v1/jobs (a query string may follow) or a whole URL. Data piped to
  stdin is sent as the request body.

    nomad operator api /v1/jobs
    nomad operator api -filter 'Status == "running"' /v1/jobs
    nomad operator api -X DELETE /v1/var/app/db
    nomad operator api -dryrun /v1/nodes
`, optionsHelp("API", c.options()))
}

func (c *OperatorAPICommand) options() []option {
	return []option{
		flagOpt(&c.method, "", "-X=<method>", "HTTP method. The default is POST when data is piped to stdin, else GET."),
		valueOpt(&c.headers, "-H=<header>", "An extra header, \"Name: value\". May be given more than once."),
		flagOpt(&c.filter, "", "-filter=<expression>", "Filter expression sent as the filter query parameter."),
		boolOpt(&c.dryrun, "-dryrun", "Print the equivalent curl command instead of sending the request. The\ntoken appears as ${NOMAD_TOKEN}, never as its value."),
		boolOpt(&c.verbose, "-verbose", "Print the request line and the response status and headers to stderr."),
	}
}

func (c *OperatorAPICommand) Synopsis() string { return "Query the Nomad HTTP API" }

// headerFlags collects repeated -H flags.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

func (c *OperatorAPICommand) Run(args []string) int {
	fs := c.flagSetWith("operator api", c.options())
	pos, code, ok := c.parseArgs(fs, args, "<path>")
	if !ok {
		return code
	}
	cfg := c.clientConfig()
	target, err := apiRequestURL(cfg, pos[0], c.filter)
	if err != nil {
		return c.fail("Error building the request URL: %v", err)
	}
	hdr := http.Header{}
	for _, h := range c.headers {
		name, value, found := strings.Cut(h, ":")
		if !found || strings.TrimSpace(name) == "" {
			return c.fail("Invalid -H %q: expected \"Name: value\"", h)
		}
		hdr.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	body, err := c.body()
	if err != nil {
		return c.fail("Error reading the request body from stdin: %v", err)
	}
	if c.method == "" {
		c.method = http.MethodGet
		if body != nil {
			c.method = http.MethodPost
		}
	}
	c.method = strings.ToUpper(c.method)
	if c.dryrun {
		c.Ui.Output(curlCommand(cfg, c.method, target, hdr, body))
		return 0
	}
	return c.send(cfg, c.method, target, hdr, body, c.verbose)
}

// body reads the request body: from Stdin when set, else from os.Stdin when something is
// piped to it (a terminal is never waited on). nil means no body.
func (c *OperatorAPICommand) body() ([]byte, error) {
	in := c.Stdin
	if in == nil {
		st, err := os.Stdin.Stat()
		if err != nil || st.Mode()&os.ModeCharDevice != 0 || (st.Mode()&os.ModeNamedPipe == 0 && !st.Mode().IsRegular()) {
			return nil, nil
		}
		in = os.Stdin
	}
	b, err := io.ReadAll(in)
	if err != nil || len(b) == 0 {
		return nil, err
	}
	return b, nil
}

func (c *OperatorAPICommand) send(cfg *api.Config, method string, target *url.URL, hdr http.Header, body []byte, verbose bool) int {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	httpClient := &http.Client{Transport: tr}
	if target.Scheme == "https" {
		if err := api.ConfigureTLS(httpClient, cfg.TLSConfig); err != nil {
			return c.fail("Error configuring TLS: %v", err)
		}
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, target.String(), rd)
	if err != nil {
		return c.fail("Error building the request: %v", err)
	}
	req.Header = hdr
	if cfg.SecretID != "" {
		req.Header.Set("X-Nomad-Token", cfg.SecretID)
	}
	if verbose {
		c.Ui.Error(fmt.Sprintf("> %s %s", method, redactURL(target)))
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return c.fail("Error performing the request: %v", err)
	}
	defer resp.Body.Close()
	if verbose {
		c.Ui.Error("< " + resp.Proto + " " + resp.Status)
		names := make([]string, 0, len(resp.Header))
		for k := range resp.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			c.Ui.Error(fmt.Sprintf("< %s: %s", k, strings.Join(resp.Header[k], ", ")))
		}
	}
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return c.fail("Error: the agent answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		return c.fail("Error reading the response: %v", err)
	}
	return 0
}

// apiRequestURL resolves path against the configured address and adds the region,
// namespace and filter the command was given, unless the path's own query sets them.
func apiRequestURL(cfg *api.Config, path, filter string) (*url.URL, error) {
	var u *url.URL
	var err error
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		u, err = url.Parse(path)
	} else {
		var base *url.URL
		if base, err = url.Parse(cfg.Address); err != nil {
			return nil, fmt.Errorf("invalid address %q: %w", cfg.Address, err)
		}
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		var rel *url.URL
		if rel, err = url.Parse(path); err == nil {
			u = base.ResolveReference(rel)
		}
	}
	if err != nil {
		return nil, err
	}
	q := u.Query()
	set := func(k, v string) {
		if v != "" && q.Get(k) == "" {
			q.Set(k, v)
		}
	}
	set("region", cfg.Region)
	set("namespace", cfg.Namespace)
	set("filter", filter)
	u.RawQuery = q.Encode()
	return u, nil
}

// curlCommand is the curl invocation that sends the same request. The token is written as
// a reference to the environment so the line can be shared without the secret.
func curlCommand(cfg *api.Config, method string, target *url.URL, hdr http.Header, body []byte) string {
	lines := []string{"curl"}
	if method != http.MethodGet || body != nil {
		lines = append(lines, "-X "+method)
	}
	if t := cfg.TLSConfig; t != nil && target.Scheme == "https" {
		if t.CACert != "" {
			lines = append(lines, "--cacert "+shellQuote(t.CACert))
		}
		if t.CAPath != "" {
			lines = append(lines, "--capath "+shellQuote(t.CAPath))
		}
		if t.ClientCert != "" {
			lines = append(lines, "--cert "+shellQuote(t.ClientCert))
		}
		if t.ClientKey != "" {
			lines = append(lines, "--key "+shellQuote(t.ClientKey))
		}
		if t.Insecure {
			lines = append(lines, "--insecure")
		}
		if t.TLSServerName != "" {
			// curl checks the certificate against the URL's host: connect to the real
			// address while naming the server the certificate carries.
			host, port, err := net.SplitHostPort(target.Host)
			if err != nil {
				host, port = target.Host, "443"
			}
			lines = append(lines, "--connect-to "+shellQuote(t.TLSServerName+":"+port+":"+host+":"+port))
			named := *target
			named.Host = net.JoinHostPort(t.TLSServerName, port)
			target = &named
		}
	}
	names := make([]string, 0, len(hdr))
	for k := range hdr {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range hdr[k] {
			lines = append(lines, "-H "+shellQuote(k+": "+v))
		}
	}
	if cfg.SecretID != "" {
		lines = append(lines, `-H "X-Nomad-Token: ${NOMAD_TOKEN}"`)
	}
	if body != nil {
		lines = append(lines, "--data-binary "+shellQuote(string(body)))
	}
	lines = append(lines, shellQuote(target.String()))
	return strings.Join(lines, " \\\n  ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain characters.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@,+=%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// redactURL is the URL for a log line: a user's password in it is hidden.
func redactURL(u *url.URL) string {
	return u.Redacted()
}
