package command

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Event sinks are this fork's own API (/v1/event/sink/:id): the leader POSTs the events a sink
// selects to its address, signed with its secret.

const eventSinkHelp = `
Usage: nomad event sink <subcommand> [options] [args]

  Register receivers the cluster's leader POSTs selected events to, each
  batch signed with the sink's secret (X-Nomad-Signature: sha256=<HMAC>),
  delivered at least once, in order. A receiver that was away longer than
  the event buffer lasts is told so and gets every purge it missed from the
  purge history. Needs a management token.
`

// eventSinkView is GET /v1/event/sink/:id.
type eventSinkView struct {
	ID               string
	Type             string
	Address          string
	Topics           map[string][]string
	Filter           string
	LatestIndex      uint64
	LastError        string
	LastErrorTime    int64
	LastDeliveryTime int64
	CreateIndex      uint64
	ModifyIndex      uint64
}

// eventSinkSpec is a sink file: JSON with the API's field names, or HCL with these.
type eventSinkSpec struct {
	ID      string              `hcl:"id,optional"`
	Type    string              `hcl:"type,optional"`
	Address string              `hcl:"address,optional"`
	Topics  map[string][]string `hcl:"topics,optional"`
	Filter  string              `hcl:"filter,optional"`
	Secret  string              `hcl:"secret,optional"`
}

// parseEventSinkSpec reads a sink file: JSON when it starts with '{', HCL otherwise. Unknown
// fields are errors, so a misspelt filter is not silently dropped.
func parseEventSinkSpec(src []byte) (*eventSinkSpec, error) {
	var spec eventSinkSpec
	if strings.HasPrefix(strings.TrimSpace(string(src)), "{") {
		dec := json.NewDecoder(strings.NewReader(string(src)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&spec); err != nil {
			return nil, err
		}
		return &spec, nil
	}
	file, diags := hclsyntax.ParseConfig(src, "sink.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	if diags := gohcl.DecodeBody(file.Body, nil, &spec); diags.HasErrors() {
		return nil, diags
	}
	return &spec, nil
}

func eventSinkPath(id string) string { return "/v1/event/sink/" + url.PathEscape(id) }

// EventSinkRegisterCommand registers or updates a sink.
type EventSinkRegisterCommand struct {
	Meta

	// Stdin is read when the file argument is "-"; nil means os.Stdin.
	Stdin       io.Reader
	id          string
	addressFlag string
	filter      string
	secret      string
	topics      stringsFlag
}

func (c *EventSinkRegisterCommand) Help() string {
	return helpText(`
Usage: nomad event sink register [options] [<file>]

  Register an event sink, or update the one with the same ID (its delivery
  cursor is kept). The file is JSON with the API's fields, or HCL:

    id      = "purge-alerts"
    type    = "webhook"
    address = "https://alerts.example.com/nomad"
    topics  = { Job = ["*"] }
    filter  = "Type == \"JobDeregistered\" and Payload.Purge == true"
    secret  = "at least 16 characters"

  Flags override the file's fields; without a file the flags are the sink.
  "-" reads the file from stdin. The secret may also come from the
  environment variable NOMAD_EVENT_SINK_SECRET, so it stays out of shell
  history.
`, optionsHelp("Register", c.options()))
}

func (c *EventSinkRegisterCommand) options() []option {
	return []option{
		flagOpt(&c.id, "", "-id=<id>", "The sink's ID (letters, digits, '_', '.', '-')."),
		flagOpt(&c.addressFlag, "", "-url=<url>", "The http:// or https:// URL batches are POSTed to (the sink's Address;\n-address is the agent's, as for every command)."),
		valueOpt(&c.topics, "-topic=<Topic[:Key]>", "A topic to deliver, optionally one key of it; may be repeated. Without\na key every event of the topic is selected."),
		flagOpt(&c.filter, "", "-filter=<expression>", "A go-bexpr expression over each event's JSON form."),
		flagOpt(&c.secret, "", "-secret=<secret>", "The HMAC-SHA256 key that signs every body."),
	}
}

func (c *EventSinkRegisterCommand) Synopsis() string { return "Register or update an event sink" }

func (c *EventSinkRegisterCommand) Run(args []string) int {
	fs := c.flagSetWith("event sink register", c.options())
	pos, code, ok := c.parseAtMostOne(fs, args, "This command takes at most one argument: <file>")
	if !ok {
		return code
	}
	spec := &eventSinkSpec{}
	if len(pos) == 1 {
		src, err := readInput(pos[0], c.Stdin)
		if err != nil {
			return c.fail("Error reading %s: %v", pos[0], err)
		}
		if spec, err = parseEventSinkSpec(src); err != nil {
			return c.fail("Error parsing %s: %v", pos[0], err)
		}
	}
	if c.id != "" {
		spec.ID = c.id
	}
	if c.addressFlag != "" {
		spec.Address = c.addressFlag
	}
	if c.filter != "" {
		spec.Filter = c.filter
	}
	if len(c.topics) > 0 {
		spec.Topics = map[string][]string{}
		for _, t := range c.topics {
			topic, key, _ := strings.Cut(t, ":")
			if key == "" {
				key = "*"
			}
			spec.Topics[topic] = append(spec.Topics[topic], key)
		}
	}
	if c.secret != "" {
		spec.Secret = c.secret
	} else if spec.Secret == "" {
		spec.Secret = os.Getenv("NOMAD_EVENT_SINK_SECRET")
	}
	if spec.Type == "" {
		spec.Type = "webhook"
	}
	if spec.ID == "" {
		return c.fail("A sink ID is required (-id or the file's id)")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	body := map[string]any{"ID": spec.ID, "Type": spec.Type, "Address": spec.Address, "Topics": spec.Topics,
		"Filter": spec.Filter, "Secret": spec.Secret}
	if _, err := client.Raw().Write(eventSinkPath(spec.ID), body, nil, nil); err != nil {
		return c.fail("Error registering event sink: %v", err)
	}
	c.Ui.Output(fmt.Sprintf("Event sink %q registered", spec.ID))
	return 0
}

// EventSinkListCommand lists the sinks.
type EventSinkListCommand struct {
	Meta
}

func (c *EventSinkListCommand) Help() string {
	return helpText(`
Usage: nomad event sink list [options]

  List the event sinks with their delivery cursor and last error.
`, "")
}

func (c *EventSinkListCommand) Synopsis() string { return "List event sinks" }

func (c *EventSinkListCommand) Run(args []string) int {
	_, client, code, ok := c.connect(c.FlagSet("event sink list"), args)
	if !ok {
		return code
	}
	var sinks []eventSinkView
	if _, err := client.Raw().Query("/v1/event/sinks", &sinks, nil); err != nil {
		return c.fail("Error listing event sinks: %v", err)
	}
	if len(sinks) == 0 {
		c.Ui.Output("No event sinks")
		return 0
	}
	sort.Slice(sinks, func(i, j int) bool { return sinks[i].ID < sinks[j].ID })
	rows := []string{"ID|Type|Address|Latest Index|Last Error"}
	for _, s := range sinks {
		rows = append(rows, strings.Join([]string{s.ID, s.Type, s.Address, strconv.FormatUint(s.LatestIndex, 10),
			oneLine(s.LastError)}, "|"))
	}
	c.Ui.Output(formatList(rows))
	return 0
}

// oneLine keeps an error on its table row: a "|" would split the cell.
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "|", "/").Replace(s)
}

// EventSinkStatusCommand shows one sink.
type EventSinkStatusCommand struct {
	Meta
}

func (c *EventSinkStatusCommand) Help() string {
	return helpText(`
Usage: nomad event sink status [options] <id>

  Show an event sink: where it delivers, what it selects, the last index
  its receiver acknowledged and the last delivery error. The secret is never
  shown.
`, "")
}

func (c *EventSinkStatusCommand) Synopsis() string { return "Show an event sink's delivery status" }

func (c *EventSinkStatusCommand) Run(args []string) int {
	pos, client, code, ok := c.connect(c.FlagSet("event sink status"), args, "<id>")
	if !ok {
		return code
	}
	var s eventSinkView
	if _, err := client.Raw().Query(eventSinkPath(pos[0]), &s, nil); err != nil {
		return c.fail("Error reading event sink: %v", err)
	}
	topics := make([]string, 0, len(s.Topics))
	for t, keys := range s.Topics {
		for _, k := range keys {
			topics = append(topics, t+":"+k)
		}
	}
	sort.Strings(topics)
	c.Ui.Output(formatKV([]string{
		"ID|" + s.ID,
		"Type|" + s.Type,
		"Address|" + s.Address,
		"Topics|" + strings.Join(topics, ", "),
		"Filter|" + oneLine(s.Filter),
		"Latest Index|" + strconv.FormatUint(s.LatestIndex, 10),
		"Last Delivery|" + formatUnixNano(s.LastDeliveryTime),
		"Last Error|" + oneLine(s.LastError),
		"Last Error Time|" + formatUnixNano(s.LastErrorTime),
	}))
	return 0
}

// EventSinkDeregisterCommand removes a sink.
type EventSinkDeregisterCommand struct {
	Meta
}

func (c *EventSinkDeregisterCommand) Help() string {
	return helpText(`
Usage: nomad event sink deregister [options] <id>

  Remove an event sink. Nothing more is delivered to it.
`, "")
}

func (c *EventSinkDeregisterCommand) Synopsis() string { return "Remove an event sink" }

func (c *EventSinkDeregisterCommand) Run(args []string) int {
	pos, client, code, ok := c.connect(c.FlagSet("event sink deregister"), args, "<id>")
	if !ok {
		return code
	}
	if _, err := client.Raw().Delete(eventSinkPath(pos[0]), nil, nil); err != nil {
		return c.fail("Error deregistering event sink: %v", err)
	}
	c.Ui.Output(fmt.Sprintf("Event sink %q deregistered", pos[0]))
	return 0
}
