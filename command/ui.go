package command

import (
	"fmt"
	"net/url"
	"os/exec"
	"runtime"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"
)

// UiCommand opens the web UI, or prints its URL.
type UiCommand struct {
	Meta
	// open starts the browser; tests replace it.
	open    func(url string) error
	showURL bool
}

func (c *UiCommand) Help() string {
	return helpText(`
Usage: nomad ui [options] [identifier]

  Open the web UI in the default browser. With an identifier (a job ID, or an
  allocation or node ID or unique prefix), open that object's page.
`, optionsHelp("UI", c.options()))
}

func (c *UiCommand) options() []option {
	return []option{
		boolOpt(&c.showURL, "-show-url", "Print the URL instead of opening a browser."),
	}
}

func (c *UiCommand) Synopsis() string { return "Open the Nomad Web UI" }

func (c *UiCommand) Run(args []string) int {
	fs := c.flagSetWith("ui", c.options())
	pos, code, ok := c.parseAtMostOne(fs, args, "This command takes either no arguments or one: <identifier>")
	if !ok {
		return code
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	base, err := url.Parse(client.Address())
	if err != nil {
		return c.fail("Error parsing the agent address %q: %v", client.Address(), err)
	}
	target := *base
	target.Path = strings.TrimRight(base.Path, "/") + "/ui/"
	if len(pos) == 1 {
		page, ok := c.uiPage(client, pos[0])
		if !ok {
			return 1
		}
		target.Path += page
	}
	if ns := c.Namespace(); ns != "" && len(pos) == 1 {
		target.RawQuery = url.Values{"namespace": {ns}}.Encode()
	}
	u := target.String()
	if c.showURL {
		c.Ui.Output(u)
		return 0
	}
	c.Ui.Output(fmt.Sprintf("Opening URL %q", u))
	open := c.open
	if open == nil {
		open = openBrowser
	}
	if err := open(u); err != nil {
		return c.fail("Error opening the browser: %v (open %s yourself)", err, u)
	}
	return 0
}

// uiPage finds what id names: a job by exact ID, else one allocation or node by prefix.
func (c *UiCommand) uiPage(client *api.Client, id string) (string, bool) {
	res, _, err := client.Search().PrefixSearch(id, contexts.All, nil)
	if err != nil {
		c.fail("Error querying search with id: %q: %v", id, err)
		return "", false
	}
	for _, jobID := range res.Matches[contexts.Jobs] {
		if jobID == id {
			return "jobs/" + url.PathEscape(id), true
		}
	}
	pages := []struct {
		ctx  contexts.Context
		path string
	}{{contexts.Jobs, "jobs/"}, {contexts.Allocs, "allocations/"}, {contexts.Nodes, "clients/"}}
	var found []string
	for _, p := range pages {
		for _, m := range res.Matches[p.ctx] {
			found = append(found, p.path+url.PathEscape(m))
		}
	}
	switch len(found) {
	case 0:
		c.fail("No job, allocation or node matches %q", id)
		return "", false
	case 1:
		return found[0], true
	}
	c.fail("Identifier %q matches more than one object; give more of it", id)
	return "", false
}

func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	return cmd.Run()
}
