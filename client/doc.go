// Package client is the half of an agent that runs allocations: it registers its node with
// the servers, heartbeats, watches the allocations placed on the node, runs their tasks with
// the drivers of client/drivers and reports task states and allocation statuses back. It
// runs commands in running tasks (Exec) and finds their log files for the agent, which
// authorizes those requests with the servers first: the client holds no ACLs.
//
// It talks to the servers only through the Servers interface (in-process calls when the agent
// also runs a server), never to the state store: it imports structs, its drivers,
// client/allocdir and client/template only. Templates read variables and services over the
// agent's HTTP API (client/template) with the task's workload identity, so the servers'
// ACLs decide. allocdir builds every path under the allocation directory and
// refuses one that would leave it, whatever the names the job or the request carry.
package client
