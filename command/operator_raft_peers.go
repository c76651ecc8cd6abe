package command

import (
	"fmt"
	"strings"

	"github.com/hashicorp/cli"
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

// newOperatorRaftListPeers lists the Raft configuration.
func newOperatorRaftListPeers(m Meta) cli.Command {
	var stale bool
	return &command{Meta: m, name: "operator raft list-peers", synopsis: "Display the current Raft peer configuration",
		usage: `
Usage: nomad operator raft list-peers [options]

  Display the servers of the Raft configuration of a running cluster: who
  leads and who votes. Needs a management token when ACLs are enabled.
`,
		options: []option{
			boolOpt(&stale, "-stale", "Answer from the agent's server even if it is not the leader."),
		},
		withClient: func(c *command, client *api.Client, _ []string) int {
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
		},
	}
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
	return c.runOnPeer("operator raft remove-peer", args, peerAction{
		byID:      func(op *api.Operator, id string) error { return op.RaftRemovePeerByID(id, nil) },
		byAddress: func(op *api.Operator, addr string) error { return op.RaftRemovePeerByAddress(addr, nil) },
		failed:    "Error removing peer",
		done:      "Removed peer with",
	})
}

// peerAction is an operator action on one Raft peer, named by -peer-id or -peer-address.
type peerAction struct {
	byID, byAddress func(op *api.Operator, target string) error
	// failed starts the error line; done starts the success line, which ends with the peer.
	failed, done string
}

// runOnPeer parses -peer-id and -peer-address (exactly one) and runs the action on the peer.
func (m *Meta) runOnPeer(name string, args []string, action peerAction) int {
	var id, address string
	fs := m.FlagSet(name)
	fs.StringVar(&id, "peer-id", "", "")
	fs.StringVar(&address, "peer-address", "", "")
	if _, code, ok := m.parseArgs(fs, args); !ok {
		return code
	}
	id, address = strings.TrimSpace(id), strings.TrimSpace(address)
	if (id == "") == (address == "") {
		return m.fail("Give exactly one of -peer-id and -peer-address")
	}
	client, ok := m.client()
	if !ok {
		return 1
	}
	var err error
	if id != "" {
		err = action.byID(client.Operator(), id)
	} else {
		err = action.byAddress(client.Operator(), address)
	}
	if err != nil {
		return m.fail("%s: %v", action.failed, err)
	}
	if id != "" {
		m.Ui.Output(fmt.Sprintf("%s id %q", action.done, id))
	} else {
		m.Ui.Output(fmt.Sprintf("%s address %q", action.done, address))
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
	return c.runOnPeer("operator raft transfer-leadership", args, peerAction{
		byID:      func(op *api.Operator, id string) error { return op.RaftTransferLeadershipByID(id, nil) },
		byAddress: func(op *api.Operator, addr string) error { return op.RaftTransferLeadershipByAddress(addr, nil) },
		failed:    "Error transferring leadership",
		done:      "Transferred leadership to peer with",
	})
}
