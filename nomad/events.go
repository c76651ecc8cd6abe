package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// onCommit runs on the FSM goroutine after every write transaction: it publishes the events
// derived from the transaction's changes and reacts to ACL changes. Publishing never blocks.
func (s *Server) onCommit(txn *state.Txn, changes memdb.Changes) {
	aclChanged := false
	var deletedTokens []string
	for _, c := range changes {
		switch c.Table {
		case "acl_policy", "acl_roles":
			aclChanged = true
		case "acl_token":
			aclChanged = true
			if c.Deleted() {
				deletedTokens = append(deletedTokens, c.Before.(*structs.ACLToken).AccessorID)
			}
		case "evals":
			// The leader's broker takes every evaluation that becomes pending as it is
			// applied (a no-op on followers, whose broker is disabled). Enqueue only takes
			// the broker's mutex: it never makes the FSM wait on a worker.
			if eval, ok := c.After.(*structs.Evaluation); ok && eval.Status == structs.EvalStatusPending {
				s.evalBroker.Enqueue(eval)
			}
		}
	}
	if aclChanged {
		s.aclCache.purge()
	}
	if s.broker == nil {
		return
	}
	if events := state.EventsFromChanges(txn, changes); events != nil {
		s.broker.Publish(events)
	}
	if len(deletedTokens) > 0 {
		s.broker.CloseSubscriptionsForTokens(deletedTokens)
	}
	if aclChanged {
		// The check resolves tokens against the store, which this transaction just changed;
		// it runs off the FSM goroutine so apply never waits on subscribers.
		s.aclRecheck.request()
	}
}
