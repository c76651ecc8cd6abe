package agent

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/jobspec"
	"github.com/shoenig/test/must"
)

// Upstream's HCL1 reads several items on one line; so do we, and positions in errors stay
// those of the text as written.
func TestSecurity_AgentConfigAcceptsHCL1OneLineBodies(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		check func(t *testing.T, c *Config)
	}{
		{name: "README ports line", src: "ports { http = 4646  rpc = 4647  serf = 4648 }\n",
			check: func(t *testing.T, c *Config) { must.Eq(t, Ports{HTTP: 4646, RPC: 4647, Serf: 4648}, *c.Ports) }},
		{name: "host_network on one line", src: `client { host_network "public" { cidr = "10.0.0.0/8"  interface = "eth1"  reserved_ports = "22,80-90" } }`,
			check: func(t *testing.T, c *Config) {
				must.Eq(t, []*HostNetworkConfig{{Name: "public", CIDR: "10.0.0.0/8", Interface: "eth1", ReservedPorts: "22,80-90"}}, c.Client.HostNetworks)
			}},
		{name: "two one-line blocks on one line", src: `ports { http = 1 rpc = 2 } addresses { http = "127.0.0.2" rpc = "127.0.0.3" }`,
			check: func(t *testing.T, c *Config) {
				must.Eq(t, 1, c.Ports.HTTP)
				must.Eq(t, 2, c.Ports.RPC)
				must.Eq(t, "127.0.0.2", c.Addresses.HTTP)
				must.Eq(t, "127.0.0.3", c.Addresses.RPC)
			}},
		{name: "top-level items on one line", src: `region = "eu" datacenter = "dc9" log_level = "WARN"`,
			check: func(t *testing.T, c *Config) {
				must.Eq(t, "eu", c.Region)
				must.Eq(t, "dc9", c.Datacenter)
				must.Eq(t, "WARN", c.LogLevel)
			}},
		{name: "an argument on the brace's line, more below", src: "ports { http = 4646\n  rpc = 4647\n}\nclient { enabled = true\n  servers = [\"127.0.0.1\"]\n}\n",
			check: func(t *testing.T, c *Config) {
				must.Eq(t, Ports{HTTP: 4646, RPC: 4647}, *c.Ports)
				must.True(t, c.Client.Enabled)
				must.Eq(t, []string{"127.0.0.1"}, c.Client.Servers)
			}},
		{name: "nested one-line blocks", src: `server { enabled = true  bootstrap_expect = 1 }` + "\n" + `plugin "raw_exec" { config { enabled = true } }`,
			check: func(t *testing.T, c *Config) {
				must.True(t, c.Server.Enabled)
				must.Eq(t, 1, c.Server.BootstrapExpect)
				must.Len(t, 1, c.Plugins)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadConfigString(t, "agent.hcl", tc.src)
			must.NoError(t, err)
			tc.check(t, c)
		})
	}

	t.Run("an error after a rewritten line names the line and column written", func(t *testing.T) {
		_, err := loadConfigString(t, "agent.hcl", "ports { http = 1  rpc = 2 }\n\n  no_such_key = 3\n")
		must.Error(t, err)
		must.StrContains(t, err.Error(), "agent.hcl:3,3-")
		must.StrContains(t, err.Error(), "no_such_key")
	})
	t.Run("an error inside a rewritten line names its column", func(t *testing.T) {
		_, err := loadConfigString(t, "agent.hcl", `ports { http = 1  bogus = 2 }`)
		must.Error(t, err)
		must.StrContains(t, err.Error(), "agent.hcl:1,19-")
	})
}

// Valid HCL2 is never rewritten: no break is found in it.
func TestHCL1ItemBreaks_LeavesHCL2Alone(t *testing.T) {
	for _, src := range []string{
		"ports {\n  http = 1\n  rpc = 2\n}\n",
		"acl { enabled = true }\n",
		`meta = { a = 1, b = "x" }` + "\n",
		`list = [for s in ["a", "b"] : upper(s) if s != "b"]` + "\n",
		`m = {for k, v in {a = 1} : k => v}` + "\n",
		"x = <<EOF\na = 1 b = 2\nEOF\n",
		"# a = 1 b = 2\ny = 2 # z = 3 w = 4\n",
	} {
		must.SliceEmpty(t, hcl1ItemBreaks([]byte(src), "x.hcl"), must.Sprint(src))
	}
}

var readmeHCLBlock = regexp.MustCompile("(?s)```hcl\n(.*?)```")

// Every hcl snippet of README.md parses with what reads it in real use: job files with the
// jobspec parser, ACL policies with the policy parser, anything else with the agent
// configuration loader. A README example that stops working fails here.
func TestREADME_HCLSnippetsParse(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	must.NoError(t, err)
	blocks := readmeHCLBlock.FindAllStringSubmatch(string(src), -1)
	must.SliceNotEmpty(t, blocks)
	kinds := map[string]int{}
	for i, m := range blocks {
		snippet := m[1]
		kind := snippetKind(snippet)
		kinds[kind]++
		t.Run(kind+"-"+strings.Fields(snippet)[0]+"-"+string(rune('a'+i)), func(t *testing.T) {
			switch kind {
			case "job":
				_, err := jobspec.Parse("README.hcl", []byte(snippet), nil)
				must.NoError(t, err, must.Sprint(snippet))
			case "policy":
				_, err := acl.Parse(snippet)
				must.NoError(t, err, must.Sprint(snippet))
			case "namespace-spec":
				// Read by the CLI's spec parser: command's TestREADME_NamespaceSpecsParse.
			case "task", "template", "artifact":
				// A job file's fragment: parsed in the smallest job that holds it.
				wrapped := "job \"readme\" {\n  group \"g\" {\n" + snippet + "\n  }\n}\n"
				if kind != "task" {
					wrapped = "job \"readme\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"raw_exec\"\n" + snippet + "\n    }\n  }\n}\n"
				}
				_, err := jobspec.Parse("README.hcl", []byte(wrapped), nil)
				must.NoError(t, err, must.Sprint(snippet))
			default:
				_, err := loadConfigString(t, "README.hcl", snippet)
				must.NoError(t, err, must.Sprint(snippet))
			}
		})
	}
	must.Positive(t, kinds["agent"])
}

// snippetKind names the parser of a README snippet from its first top-level word.
func snippetKind(snippet string) string {
	for _, line := range strings.Split(snippet, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "job":
			return "job"
		case "name":
			if strings.Contains(snippet, "nomad namespace apply") {
				return "namespace-spec"
			}
		case "task", "template", "artifact":
			return fields[0]
		case "namespace", "node", "agent", "operator", "quota", "host_volume", "plugin_policy":
			return "policy"
		}
		return "agent"
	}
	return "agent"
}
