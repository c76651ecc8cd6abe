package agent

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/go-hclog"
)

const agentHelp = `
Usage: nomad agent [options]

  Starts a Nomad agent and runs until an interrupt (SIGINT) or SIGTERM is
  received, then shuts down gracefully. The agent runs a server and, with
  -client or -dev, a client that runs the allocations placed on this machine.

Options:

  -dev
    Start a single-node development agent on 127.0.0.1:4646, keeping all
    state in memory. May be combined with -config.

  -config=<path>
    A configuration file or a directory of *.hcl and *.json files. May be
    given more than once; later files win.

  -data-dir=<path>           Directory for the agent's state.
  -bind=<addr>               Address every listener binds to.
  -log-level=<level>         TRACE, DEBUG, INFO, WARN, ERROR or OFF.
  -log-json                  Write logs as JSON.
  -node=<name>               Name of this node (default: hostname).
  -region=<region>           Region of the agent (default: global).
  -dc=<datacenter>           Datacenter of the agent (default: dc1).
  -server                    Run the server.
  -client                    Run the client. Without -server it reaches the servers
                             named by -servers or client.servers over their RPC port.
  -servers=<addr,...>        RPC addresses (host[:port], default port 4647) of the
                             servers a client-only agent connects to.
  -client-intro-token=<jwt>  Client introduction token (nomad node intro create) the
                             node shows when the servers do not know it yet.
                             NOMAD_CLIENT_INTRO_TOKEN overrides it; without either the
                             client reads <state_dir>/intro_token.jwt.
  -bootstrap-expect=<n>      Number of servers to wait for before electing.
  -acl-enabled               Enable ACLs.
  -retry-join=<addr>         Address of a server to join; may be repeated.
`

// Run is the `nomad agent` command. It returns the process exit code: 0 after a graceful
// shutdown on SIGINT or SIGTERM, 1 when the configuration is bad or the agent cannot start.
// SIGHUP reloads the TLS certificates.
func Run(args []string, ui cli.Ui) int {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	return run(args, ui, signals)
}

// run is Run with the shutdown signals passed in, so tests can stop it.
func run(args []string, ui cli.Ui, signals <-chan os.Signal) int {
	cfg, err := readConfig(args)
	if errors.Is(err, flag.ErrHelp) {
		ui.Output(strings.TrimSpace(agentHelp))
		return 0
	}
	if err != nil {
		ui.Error("==> " + err.Error())
		return 1
	}

	logOut := &uiWriter{ui: ui}
	// An intercept logger, so that /v1/agent/monitor can attach to it.
	logger := hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name:       "agent",
		Level:      hclog.LevelFromString(cfg.LogLevel),
		JSONFormat: cfg.LogJSON,
		Output:     logOut,
	})
	// Every connection holds a descriptor: the per-address caps keep one address to its
	// share, and the limit must leave room for all of them.
	logFileLimit(logger)
	// consul-template (templates) logs through the standard library's logger, a line per
	// blocking query at DEBUG and TRACE: its lines go through the agent's logger and level.
	log.SetFlags(0)
	log.SetOutput(logger.Named("template").StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}))
	a, err := NewAgent(cfg, logger)
	if err != nil {
		logOut.open()
		ui.Error("==> Error starting agent: " + err.Error())
		return 1
	}
	printBanner(ui, a)
	logOut.open()

	sig := <-signals
	for sig == syscall.SIGHUP {
		if err := a.ReloadTLS(); err != nil {
			logger.Error("reloading TLS certificates failed; the ones in use stay", "error", err)
		} else {
			logger.Info("reloaded TLS certificates")
		}
		sig = <-signals
	}
	logger.Info("caught signal, shutting down", "signal", sig)
	leave := (sig == os.Interrupt && cfg.LeaveOnInterrupt) || (sig == syscall.SIGTERM && cfg.LeaveOnTerminate)
	done := make(chan struct{})
	go func() {
		if leave {
			a.Leave()
		}
		a.Shutdown()
		close(done)
	}()
	select {
	case <-done:
		return 0
	case <-signals:
		ui.Error("==> Second signal received, exiting without a graceful shutdown")
		return 1
	}
}

// agentFlags holds the command line. Only flags that were given override the files.
type agentFlags struct {
	dev, logJSON, server, client, aclEnabled bool
	configs, retryJoin                       stringList
	servers, introToken                      string
	dataDir, bind, logLevel, node, region    string
	dc                                       string
	bootstrapExpect                          int
}

// readConfig builds the agent configuration: the defaults (or -dev's), then each -config in
// order, then the flags, each winning over what came before; then addresses are filled in
// and the result validated.
func readConfig(args []string) (*Config, error) {
	var f agentFlags
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.dev, "dev", false, "")
	fs.Var(&f.configs, "config", "")
	fs.StringVar(&f.dataDir, "data-dir", "", "")
	fs.StringVar(&f.bind, "bind", "", "")
	fs.StringVar(&f.logLevel, "log-level", "", "")
	fs.BoolVar(&f.logJSON, "log-json", false, "")
	fs.StringVar(&f.node, "node", "", "")
	fs.StringVar(&f.region, "region", "", "")
	fs.StringVar(&f.dc, "dc", "", "")
	fs.BoolVar(&f.server, "server", false, "")
	fs.BoolVar(&f.client, "client", false, "")
	fs.StringVar(&f.servers, "servers", "", "")
	fs.StringVar(&f.introToken, "client-intro-token", "", "")
	fs.IntVar(&f.bootstrapExpect, "bootstrap-expect", 0, "")
	fs.BoolVar(&f.aclEnabled, "acl-enabled", false, "")
	fs.Var(&f.retryJoin, "retry-join", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%v (see nomad agent -h)", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: the agent takes only flags (see nomad agent -h)", fs.Arg(0))
	}

	cfg := DefaultConfig()
	if f.dev {
		cfg = DevConfig()
	}
	for _, path := range f.configs {
		fileCfg, err := LoadConfig(path)
		if err != nil {
			return nil, fmt.Errorf("Error loading configuration from %s: %v", path, err)
		}
		cfg = cfg.Merge(fileCfg)
	}

	// Applied after the merge, so that a flag set to false or 0 still wins.
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "data-dir":
			cfg.DataDir = f.dataDir
		case "bind":
			cfg.BindAddr = f.bind
		case "log-level":
			cfg.LogLevel = f.logLevel
		case "log-json":
			cfg.LogJSON = f.logJSON
		case "node":
			cfg.Name = f.node
		case "region":
			cfg.Region = f.region
		case "dc":
			cfg.Datacenter = f.dc
		case "server":
			ensure(&cfg.Server).Enabled = f.server
		case "client":
			ensure(&cfg.Client).Enabled = f.client
		case "servers":
			var addrs []string
			for _, a := range strings.Split(f.servers, ",") {
				if a = strings.TrimSpace(a); a != "" {
					addrs = append(addrs, a)
				}
			}
			ensure(&cfg.Client).Servers = addrs
		case "bootstrap-expect":
			ensure(&cfg.Server).BootstrapExpect = f.bootstrapExpect
		case "acl-enabled":
			ensure(&cfg.ACL).Enabled = f.aclEnabled
		case "retry-join":
			ensure(&cfg.Server).RetryJoin = append([]string(nil), f.retryJoin...)
		case "client-intro-token":
			ensure(&cfg.Client).IntroToken = f.introToken
		}
	})
	if token := os.Getenv("NOMAD_CLIENT_INTRO_TOKEN"); token != "" {
		ensure(&cfg.Client).IntroToken = token
	}
	cfg.NormalizeAddrs()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("Invalid configuration: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return cfg, nil
}

func printBanner(ui cli.Ui, a *Agent) {
	cfg := a.config
	info := []struct{ key, value string }{
		{"Advertise Addrs", fmt.Sprintf("HTTP: %s; RPC: %s; Serf: %s", cfg.Advertise.HTTP, cfg.Advertise.RPC, cfg.Advertise.Serf)},
		{"Bind Addrs", fmt.Sprintf("HTTP: [%s]; RPC: %s", a.HTTPAddr(), rpcBind(a))},
		{"Client", fmt.Sprint(a.Client() != nil)},
		{"Log Level", cfg.LogLevel},
		{"Node Id", nodeIDOf(a)},
		{"Region", fmt.Sprintf("%s (DC: %s)", cfg.Region, cfg.Datacenter)},
		{"Server", fmt.Sprint(a.server != nil)},
		{"ACLs", fmt.Sprint(cfg.ACL != nil && cfg.ACL.Enabled)},
	}
	width := 0
	for _, kv := range info {
		width = max(width, len(kv.key))
	}
	var b strings.Builder
	b.WriteString("==> Nomad agent configuration:\n\n")
	for _, kv := range info {
		fmt.Fprintf(&b, "%*s: %s\n", width+4, kv.key, kv.value)
	}
	ui.Output(b.String())
	ui.Output("==> Nomad agent started! Log data will stream in below:\n")
}

func nodeIDOf(a *Agent) string {
	if a.server != nil {
		return a.server.Config().NodeID
	}
	return a.client.NodeID()
}

func rpcBind(a *Agent) string {
	if a.server == nil {
		return "none (client only: servers " + strings.Join(append(append([]string(nil), a.config.Client.Servers...), a.config.Client.RetryJoin...), ", ") + ")"
	}
	if a.server.Config().RaftBindAddr == "" {
		return "in-memory (dev)"
	}
	return a.server.Config().RaftBindAddr
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// uiWriter sends log lines to the command's UI. Until open is called it holds them, so the
// banner comes first and the startup logs follow it. hclog writes one entry per Write.
type uiWriter struct {
	ui     cli.Ui
	mu     sync.Mutex
	opened bool
	held   []string
}

func (w *uiWriter) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.opened {
		w.held = append(w.held, line)
		return len(p), nil
	}
	w.ui.Output(line)
	return len(p), nil
}

// open writes the held lines and lets later ones through.
func (w *uiWriter) open() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, line := range w.held {
		w.ui.Output(line)
	}
	w.held, w.opened = nil, true
}
