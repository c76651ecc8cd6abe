package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// Meta carries what every command shares: the UI and the connection flags.
// Environment variables (NOMAD_ADDR, NOMAD_TOKEN, NOMAD_NAMESPACE,
// NOMAD_REGION, NOMAD_CACERT, NOMAD_CLIENT_CERT, NOMAD_CLIENT_KEY,
// NOMAD_TLS_SERVER_NAME, NOMAD_SKIP_VERIFY) are read by api.DefaultConfig; a
// flag, when given, wins.
type Meta struct {
	Ui cli.Ui

	address   string
	token     string
	namespace string
	region    string
	noColor   bool

	caCert, clientCert, clientKey, tlsServerName string
	// tlsSkipVerify is nil unless -tls-skip-verify was given, so that
	// -tls-skip-verify=false can override NOMAD_SKIP_VERIFY.
	tlsSkipVerify *bool

	// monitorTimeout bounds how long a command follows its evaluation when
	// not detached. The scheduler may never pick an evaluation up, so an
	// unbounded wait would hang the terminal. Zero means defaultMonitorWait.
	monitorTimeout time.Duration
}

const defaultMonitorWait = 2 * time.Second

// flagSetCreated, when set (only by tests), sees every flag set a command makes, so a test can
// check that each flag a command accepts is documented in its help.
var flagSetCreated func(*flag.FlagSet)

// FlagSet returns a flag set that already knows the connection flags. Flag
// errors are reported by the caller through the UI, never printed by the
// flag package itself.
func (m *Meta) FlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if flagSetCreated != nil {
		flagSetCreated(fs)
	}
	fs.StringVar(&m.address, "address", "", "")
	fs.StringVar(&m.token, "token", "", "")
	fs.StringVar(&m.namespace, "namespace", "", "")
	fs.StringVar(&m.region, "region", "", "")
	fs.BoolVar(&m.noColor, "no-color", false, "")
	fs.StringVar(&m.caCert, "ca-cert", "", "")
	fs.StringVar(&m.clientCert, "client-cert", "", "")
	fs.StringVar(&m.clientKey, "client-key", "", "")
	fs.StringVar(&m.tlsServerName, "tls-server-name", "", "")
	fs.BoolFunc("tls-skip-verify", "", func(v string) error {
		b, err := strconv.ParseBool(v)
		m.tlsSkipVerify = &b
		return err
	})
	return fs
}

// Client builds an API client from the environment and the parsed flags.
func (m *Meta) Client() (*api.Client, error) {
	return api.NewClient(m.clientConfig())
}

// clientConfig is the environment with the parsed flags laid over it.
func (m *Meta) clientConfig() *api.Config {
	cfg := api.DefaultConfig()
	overrideIfGiven(&cfg.Address, m.address)
	overrideIfGiven(&cfg.SecretID, m.token)
	overrideIfGiven(&cfg.Namespace, m.namespace)
	overrideIfGiven(&cfg.Region, m.region)
	m.applyTLSFlags(cfg)
	return cfg
}

// applyTLSFlags lays the TLS flags over what api.DefaultConfig read from the
// environment.
func (m *Meta) applyTLSFlags(cfg *api.Config) {
	if cfg.TLSConfig == nil {
		cfg.TLSConfig = &api.TLSConfig{}
	}
	t := cfg.TLSConfig
	overrideIfGiven(&t.CACert, m.caCert)
	overrideIfGiven(&t.ClientCert, m.clientCert)
	overrideIfGiven(&t.ClientKey, m.clientKey)
	overrideIfGiven(&t.TLSServerName, m.tlsServerName)
	if m.tlsSkipVerify != nil {
		t.Insecure = *m.tlsSkipVerify
	}
}

// overrideIfGiven lays a flag's value over what the environment set, when the flag was given.
func overrideIfGiven(setting *string, flagValue string) {
	if flagValue != "" {
		*setting = flagValue
	}
}

// Namespace is the namespace the command addresses: the flag, else the
// environment, else empty (the agent then uses "default").
func (m *Meta) Namespace() string {
	if m.namespace != "" {
		return m.namespace
	}
	return os.Getenv("NOMAD_NAMESPACE")
}

// parse parses args and returns the positional arguments. Unlike the flag
// package alone it accepts flags after positional arguments, so both
// "acl policy info -json NAME" and "acl policy info NAME -json" work; "--"
// ends flag parsing. ok is false when the caller must return code.
func (m *Meta) parse(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	for {
		// A negative number is an argument, not a flag, so that "job scale
		// web -1" reaches the command's own validation.
		if len(args) > 0 && isNegativeNumber(args[0]) {
			pos = append(pos, args[0])
			args = args[1:]
			continue
		}
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, cli.RunResultHelp, false
			}
			m.Ui.Error(fmt.Sprintf("Error parsing flags: %v", err))
			return nil, 1, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, true
		}
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func isNegativeNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return len(s) > 1 && s[0] == '-' && err == nil
}

// parseArgs is parse for a command that takes exactly the positional
// arguments named in want, e.g. parseArgs(fs, args, "<name>", "<path>"); any
// other count is reported with those names.
func (m *Meta) parseArgs(fs *flag.FlagSet, args []string, want ...string) (pos []string, code int, ok bool) {
	pos, code, ok = m.parse(fs, args)
	if !ok {
		return nil, code, false
	}
	if len(pos) != len(want) {
		return nil, m.fail("%s", wrongArgCount(want)), false
	}
	return pos, 0, true
}

// parseAtMostOne is parse for a command that takes one optional argument; more are refused
// with tooMany.
func (m *Meta) parseAtMostOne(fs *flag.FlagSet, args []string, tooMany string) (pos []string, code int, ok bool) {
	pos, code, ok = m.parse(fs, args)
	if ok && len(pos) > 1 {
		return nil, m.fail("%s", tooMany), false
	}
	return pos, code, ok
}

func wrongArgCount(want []string) string {
	switch len(want) {
	case 0:
		return "This command takes no arguments"
	case 1:
		return "This command takes one argument: " + want[0]
	case 2:
		return "This command takes two arguments: " + strings.Join(want, " ")
	default:
		return fmt.Sprintf("This command takes %d arguments: %s", len(want), strings.Join(want, " "))
	}
}

// connect is parseArgs followed by client, for the many commands that have
// nothing else to check before they talk to the agent.
func (m *Meta) connect(fs *flag.FlagSet, args []string, want ...string) (pos []string, client *api.Client, code int, ok bool) {
	pos, code, ok = m.parseArgs(fs, args, want...)
	if !ok {
		return nil, nil, code, false
	}
	client, ok = m.client()
	if !ok {
		return nil, nil, 1, false
	}
	return pos, client, 0, true
}

// runDelete is the whole of a command that deletes one object: it takes the
// single argument named arg, passes it to del, and reports the outcome with
// errFormat (one verb, for the error) or doneFormat (one verb, for the
// argument).
func (m *Meta) runDelete(fs *flag.FlagSet, args []string, arg string,
	del func(client *api.Client, id string) error, errFormat, doneFormat string) int {
	pos, client, code, ok := m.connect(fs, args, arg)
	if !ok {
		return code
	}
	if err := del(client, pos[0]); err != nil {
		return m.fail(errFormat, err)
	}
	m.Ui.Output(fmt.Sprintf(doneFormat, pos[0]))
	return 0
}

// printJSON prints v as the -json flags do.
func (m *Meta) printJSON(v any) int {
	out, err := prettyJSON(v)
	if err != nil {
		return m.fail("Error encoding JSON: %v", err)
	}
	m.Ui.Output(out)
	return 0
}

// printResult prints what a read command fetched: as JSON with -json,
// otherwise as format renders it.
func printResult[T any](m *Meta, v T, asJSON bool, format func(T) string) int {
	if asJSON {
		return m.printJSON(v)
	}
	m.Ui.Output(format(v))
	return 0
}

// readInput reads the file at path, or stdin (os.Stdin when nil) when path
// is "-".
func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path != "-" {
		return os.ReadFile(path)
	}
	if stdin == nil {
		stdin = os.Stdin
	}
	return io.ReadAll(stdin)
}

// fail prints one error line and returns the failure exit code.
func (m *Meta) fail(format string, a ...any) int {
	m.Ui.Error(fmt.Sprintf(format, a...))
	return 1
}

// client is Client with the error already reported.
func (m *Meta) client() (*api.Client, bool) {
	c, err := m.Client()
	if err != nil {
		m.fail("Error initializing client: %v", err)
		return nil, false
	}
	return c, true
}

// confirm asks a yes/no question; only "y" or "yes" proceeds, and a "no"
// prints cancelled. An answer that is neither yes nor no is an error, so a
// typo never counts as consent. When proceed is false the caller returns code.
func (m *Meta) confirm(question, cancelled string) (proceed bool, code int) {
	answer, err := m.Ui.Ask(question + " [y/N]")
	if err != nil {
		// Typically no terminal (a script, CI): say how to run without a question.
		return false, m.fail("Failed to read answer: %v (pass -yes to run without asking)", err)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, 0
	case "", "n", "no":
		m.Ui.Output(cancelled)
		return false, 0
	default:
		return false, m.fail("Unexpected answer %q", answer)
	}
}

// isNotFound reports whether err is an HTTP 404 from the agent.
func isNotFound(err error) bool {
	var ue api.UnexpectedResponseError
	return errors.As(err, &ue) && ue.StatusCode() == 404
}

// generalOptions is the help shared by every command that talks to an agent.
const generalOptions = `
General Options:

  -address=<addr>
    Address of the Nomad agent. Overrides NOMAD_ADDR; the default is
    http://127.0.0.1:4646.

  -token=<secret-id>
    ACL token secret sent with each request. Overrides NOMAD_TOKEN.

  -namespace=<namespace>
    Namespace to act in. Overrides NOMAD_NAMESPACE; the agent uses
    "default" when neither is set.

  -region=<region>
    Region to forward requests to. Overrides NOMAD_REGION.

  -no-color
    Accepted for compatibility; output is never colored.

  -ca-cert=<path>
    PEM CA certificate that verifies the agent's HTTPS certificate.
    Overrides NOMAD_CACERT.

  -client-cert=<path>
    PEM client certificate presented to an agent with verify_https_client.
    Needs -client-key. Overrides NOMAD_CLIENT_CERT.

  -client-key=<path>
    PEM private key of -client-cert. Overrides NOMAD_CLIENT_KEY.

  -tls-server-name=<name>
    Server name checked in the agent's certificate (and sent as SNI), for
    when the address is not a name the certificate carries. Overrides
    NOMAD_TLS_SERVER_NAME.

  -tls-skip-verify
    Do not verify the agent's certificate. Unsafe; for testing only.
    Overrides NOMAD_SKIP_VERIFY.
`

// helpText joins a command's own help with the general options.
func helpText(usage, options string) string {
	return strings.TrimSpace(usage) + "\n" + generalOptions + options
}
