package command

import (
	"fmt"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// queryOpts asks for a stale answer when stale is set, nil otherwise.
func queryOpts(stale bool) *api.QueryOptions {
	if !stale {
		return nil
	}
	return &api.QueryOptions{AllowStale: true}
}

// These two commands talk to a running cluster over HTTP, unlike the offline raft commands
// beside them.

// OperatorRaftListPeersCommand lists the Raft configuration.
type OperatorRaftListPeersCommand struct {
	Meta
}

func (c *OperatorRaftListPeersCommand) Help() string {
	return helpText(`
Usage: nomad operator raft list-peers [options]

  Display the servers of the Raft configuration of a running cluster: who
  leads and who votes. Needs a management token when ACLs are enabled.
`, `
List Peers Options:

  -stale
    Answer from the agent's server even if it is not the leader.
`)
}

func (c *OperatorRaftListPeersCommand) Synopsis() string {
	return "Display the current Raft peer configuration"
}

func (c *OperatorRaftListPeersCommand) Run(args []string) int {
	var stale bool
	fs := c.FlagSet("operator raft list-peers")
	fs.BoolVar(&stale, "stale", false, "")
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	q := client.Operator()
	conf, err := q.RaftGetConfiguration(queryOpts(stale))
	if err != nil {
		return c.fail("Failed to retrieve raft configuration: %v", err)
	}
	rows := []string{"Node|ID|Address|State|Voter|RaftProtocol"}
	for _, s := range conf.Servers {
		state := "follower"
		if s.Leader {
			state = "leader"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%t|%s", s.Node, s.ID, s.Address, state, s.Voter, orNone(s.RaftProtocol)))
	}
	c.Ui.Output(formatList(rows))
	return 0
}

// OperatorRaftRemovePeerCommand removes a server from the Raft configuration.
type OperatorRaftRemovePeerCommand struct {
	Meta
}

func (c *OperatorRaftRemovePeerCommand) Help() string {
	return helpText(`
Usage: nomad operator raft remove-peer [options]

  Remove a server from the Raft configuration of a running cluster. This is for
  a server that is gone but still counted in the quorum; a server that is still
  alive in "nomad server members" is added back by the leader, and one that
  failed is better removed with "nomad server force-leave". Needs a management
  token when ACLs are enabled.
`, `
Remove Peer Options:

  -peer-id=<id>
    Remove the server with this Raft ID.

  -peer-address=<host:port>
    Remove the server with this Raft (RPC) address.
`)
}

func (c *OperatorRaftRemovePeerCommand) Synopsis() string {
	return "Remove a Nomad server from the Raft configuration"
}

func (c *OperatorRaftRemovePeerCommand) Run(args []string) int {
	var id, address string
	fs := c.FlagSet("operator raft remove-peer")
	fs.StringVar(&id, "peer-id", "", "")
	fs.StringVar(&address, "peer-address", "", "")
	if _, code, ok := c.parseArgs(fs, args); !ok {
		return code
	}
	id, address = strings.TrimSpace(id), strings.TrimSpace(address)
	if (id == "") == (address == "") {
		return c.fail("Give exactly one of -peer-id and -peer-address")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	var err error
	if id != "" {
		err = client.Operator().RaftRemovePeerByID(id, nil)
	} else {
		err = client.Operator().RaftRemovePeerByAddress(address, nil)
	}
	if err != nil {
		return c.fail("Error removing peer: %v", err)
	}
	if id != "" {
		c.Ui.Output(fmt.Sprintf("Removed peer with id %q", id))
	} else {
		c.Ui.Output(fmt.Sprintf("Removed peer with address %q", address))
	}
	return 0
}

// OperatorRaftTransferLeadershipCommand hands Raft leadership to another voter.
type OperatorRaftTransferLeadershipCommand struct {
	Meta
}

func (c *OperatorRaftTransferLeadershipCommand) Help() string {
	return helpText(`
Usage: nomad operator raft transfer-leadership [options]

  Transfer leadership of the cluster to another server, for example before
  restarting the current leader. The target must be a voter. Needs
  operator:write when ACLs are enabled.
`, `
Transfer Leadership Options:

  -peer-id=<id>
    Transfer leadership to the server with this Raft ID.

  -peer-address=<host:port>
    Transfer leadership to the server with this Raft (RPC) address.
`)
}

func (c *OperatorRaftTransferLeadershipCommand) Synopsis() string {
	return "Transfer leadership to a specified Nomad server"
}

func (c *OperatorRaftTransferLeadershipCommand) Run(args []string) int {
	var id, address string
	fs := c.FlagSet("operator raft transfer-leadership")
	fs.StringVar(&id, "peer-id", "", "")
	fs.StringVar(&address, "peer-address", "", "")
	if _, code, ok := c.parseArgs(fs, args); !ok {
		return code
	}
	id, address = strings.TrimSpace(id), strings.TrimSpace(address)
	if (id == "") == (address == "") {
		return c.fail("Give exactly one of -peer-id and -peer-address")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	var err error
	if id != "" {
		err = client.Operator().RaftTransferLeadershipByID(id, nil)
	} else {
		err = client.Operator().RaftTransferLeadershipByAddress(address, nil)
	}
	if err != nil {
		return c.fail("Error transferring leadership: %v", err)
	}
	if id != "" {
		c.Ui.Output(fmt.Sprintf("Transferred leadership to peer with id %q", id))
	} else {
		c.Ui.Output(fmt.Sprintf("Transferred leadership to peer with address %q", address))
	}
	return 0
}
