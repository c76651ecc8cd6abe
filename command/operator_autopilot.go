package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const operatorAutopilotHelp = `
Usage: nomad operator autopilot <subcommand> [options]

  Read and change autopilot's configuration, and see the servers' health as
  the leader judges it.
`

// newOperatorAutopilotGet prints the autopilot configuration.
func newOperatorAutopilotGet(m Meta) cli.Command {
	return &command{Meta: m, name: "operator autopilot get-config", synopsis: "Display the current Autopilot configuration",
		usage: `
Usage: nomad operator autopilot get-config [options]

  Display the autopilot configuration. Needs operator read when ACLs are
  enabled.
`,
		withClient: func(c *command, client *api.Client, _ []string) int {
			conf, _, err := client.Operator().AutopilotGetConfiguration(nil)
			if err != nil {
				return c.fail("Error querying Autopilot configuration: %v", err)
			}
			c.Ui.Output(formatKV([]string{
				fmt.Sprintf("CleanupDeadServers|%t", conf.CleanupDeadServers),
				fmt.Sprintf("LastContactThreshold|%s", conf.LastContactThreshold),
				fmt.Sprintf("MaxTrailingLogs|%d", conf.MaxTrailingLogs),
				fmt.Sprintf("MinQuorum|%d", conf.MinQuorum),
				fmt.Sprintf("ServerStabilizationTime|%s", conf.ServerStabilizationTime),
				fmt.Sprintf("EnableRedundancyZones|%t", conf.EnableRedundancyZones),
				fmt.Sprintf("DisableUpgradeMigration|%t", conf.DisableUpgradeMigration),
				fmt.Sprintf("EnableCustomUpgrades|%t", conf.EnableCustomUpgrades),
			}))
			return 0
		},
	}
}

// OperatorAutopilotSetCommand changes the autopilot configuration.
type OperatorAutopilotSetCommand struct {
	Meta
}

func (c *OperatorAutopilotSetCommand) Help() string {
	return helpText(`
Usage: nomad operator autopilot set-config [options]

  Change the autopilot configuration. Settings not given keep their values;
  the change is a check-and-set against the configuration just read, so two
  operators cannot overwrite each other unknowingly. Needs operator write when
  ACLs are enabled.
`, `
Set Config Options:

  -cleanup-dead-servers=<true|false>
    Remove servers that gossip reports failed from the Raft configuration.

  -last-contact-threshold=<duration>
    How long a server may go without hearing from the leader and stay healthy.

  -max-trailing-logs=<count>
    How many log entries a server may lag and stay healthy.

  -min-quorum=<count>
    The fewest voters dead-server cleanup leaves behind.

  -server-stabilization-time=<duration>
    How long a server must be healthy to count as stable.
`)
}

func (c *OperatorAutopilotSetCommand) Synopsis() string {
	return "Modify the current Autopilot configuration"
}

// setFlag remembers whether a flag was given, so unset ones keep the stored value.
type setFlag struct {
	set   bool
	value string
}

func (f *setFlag) String() string     { return f.value }
func (f *setFlag) Set(v string) error { f.set, f.value = true, v; return nil }

func (c *OperatorAutopilotSetCommand) Run(args []string) int {
	var cleanup, lastContact, maxTrailing, minQuorum, stabilization setFlag
	fs := c.FlagSet("operator autopilot set-config")
	for name, f := range map[string]*setFlag{
		"cleanup-dead-servers": &cleanup, "last-contact-threshold": &lastContact, "max-trailing-logs": &maxTrailing,
		"min-quorum": &minQuorum, "server-stabilization-time": &stabilization,
	} {
		fs.Var(f, name, "")
	}
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	conf, _, err := client.Operator().AutopilotGetConfiguration(nil)
	if err != nil {
		return c.fail("Error querying Autopilot configuration: %v", err)
	}
	if err := applyAutopilotFlags(conf, cleanup, lastContact, maxTrailing, minQuorum, stabilization); err != nil {
		return c.fail("%v", err)
	}
	updated, _, err := client.Operator().AutopilotCASConfiguration(conf, nil)
	if err != nil {
		return c.fail("Error setting Autopilot configuration: %v", err)
	}
	if !updated {
		return c.fail("Autopilot configuration changed while it was being updated; please try again")
	}
	c.Ui.Output("Configuration updated!")
	return 0
}

func applyAutopilotFlags(conf *api.AutopilotConfiguration, cleanup, lastContact, maxTrailing, minQuorum, stabilization setFlag) error {
	if cleanup.set {
		b, err := strconv.ParseBool(cleanup.value)
		if err != nil {
			return fmt.Errorf("-cleanup-dead-servers: %q is not true or false", cleanup.value)
		}
		conf.CleanupDeadServers = b
	}
	for _, d := range []struct {
		name string
		f    setFlag
		out  *time.Duration
	}{
		{"-last-contact-threshold", lastContact, &conf.LastContactThreshold},
		{"-server-stabilization-time", stabilization, &conf.ServerStabilizationTime},
	} {
		if !d.f.set {
			continue
		}
		v, err := time.ParseDuration(d.f.value)
		if err != nil || v < 0 {
			return fmt.Errorf("%s: %q is not a duration", d.name, d.f.value)
		}
		*d.out = v
	}
	if maxTrailing.set {
		n, err := strconv.ParseUint(maxTrailing.value, 10, 64)
		if err != nil {
			return fmt.Errorf("-max-trailing-logs: %q is not a count", maxTrailing.value)
		}
		conf.MaxTrailingLogs = n
	}
	if minQuorum.set {
		n, err := strconv.ParseUint(minQuorum.value, 10, 32)
		if err != nil {
			return fmt.Errorf("-min-quorum: %q is not a count", minQuorum.value)
		}
		conf.MinQuorum = uint(n)
	}
	return nil
}

// newOperatorAutopilotHealth prints the servers' health.
func newOperatorAutopilotHealth(m Meta) cli.Command {
	var asJSON bool
	return &command{Meta: m, name: "operator autopilot health", synopsis: "Display the current Autopilot health",
		usage: `
Usage: nomad operator autopilot health [options]

  Display each server's health as the leader judges it, and how many voters
  the cluster could lose without losing its quorum. Exits 2 when a server is
  unhealthy. Needs operator read when ACLs are enabled.
`,
		options: []option{
			boolOpt(&asJSON, "-json", "Print the health report as JSON."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			_, client, code, ok := c.connect(fs, args)
			if !ok {
				return code
			}
			health, _, err := client.Operator().AutopilotServerHealth(nil)
			if err != nil {
				// An unhealthy cluster answers 429 with the report as the body, which the client
				// library hands back inside its error text: "Unexpected response code: 429 (<body>)".
				health = healthFrom429(err)
				if health == nil {
					return c.fail("Error querying Autopilot health: %v", err)
				}
			}
			if asJSON {
				if code := c.printJSON(health); code != 0 {
					return code
				}
			} else {
				c.Ui.Output(formatKV([]string{
					fmt.Sprintf("Healthy|%t", health.Healthy),
					fmt.Sprintf("FailureTolerance|%d", health.FailureTolerance),
					fmt.Sprintf("Leader|%s", orNone(health.Leader)),
					fmt.Sprintf("Voters|%s", strings.Join(health.Voters, ", ")),
				}))
				rows := []string{"ID|Name|Address|SerfStatus|Healthy|Voter|LastContact|LastTerm|LastIndex|StableSince"}
				for _, s := range health.Servers {
					rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%t|%t|%s|%d|%d|%s", s.ID, s.Name, s.Address, orNone(s.SerfStatus),
						s.Healthy, s.Voter, s.LastContact, s.LastTerm, s.LastIndex, formatTime(s.StableSince)))
				}
				c.Ui.Output("\n" + formatList(rows))
				for _, w := range diskWarnings(client) {
					c.Ui.Warn("\nWarning: " + w)
				}
			}
			if !health.Healthy {
				return 2
			}
			return 0
		},
	}
}

// diskWarnings reads our extension of the health reply (each server's DiskWarning, which the
// official client's type drops) and returns one line per server with one.
func diskWarnings(client *api.Client) []string {
	var reply struct {
		Servers []struct{ Name, DiskWarning string }
	}
	if _, err := client.Raw().Query("/v1/operator/autopilot/health", &reply, nil); err != nil {
		body, ok := body429(err)
		if !ok || json.Unmarshal([]byte(body), &reply) != nil {
			return nil
		}
	}
	var out []string
	for _, s := range reply.Servers {
		if s.DiskWarning != "" {
			out = append(out, fmt.Sprintf("server %s: %s", s.Name, s.DiskWarning))
		}
	}
	return out
}

// body429 is the body the client library puts in its error text for an unhealthy cluster's
// 429: "Unexpected response code: 429 (<body>)".
func body429(err error) (string, bool) {
	msg := err.Error()
	const prefix = "Unexpected response code: 429 ("
	i := strings.Index(msg, prefix)
	if i < 0 || !strings.HasSuffix(msg, ")") {
		return "", false
	}
	return msg[i+len(prefix) : len(msg)-1], true
}

func healthFrom429(err error) *api.OperatorHealthReply {
	body, ok := body429(err)
	if !ok {
		return nil
	}
	var out api.OperatorHealthReply
	if json.Unmarshal([]byte(body), &out) != nil {
		return nil
	}
	return &out
}

var _ flag.Value = (*setFlag)(nil)
