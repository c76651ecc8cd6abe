package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerAllocCommands() {
	// One scheduling decision and the evaluation that made it, together: a leader change can
	// never leave an evaluation complete without its allocations, or allocations placed twice.
	handle(f, structs.ApplyPlanResultsRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ApplyPlanResultsRequest) error {
		return s.ApplyPlanResultsTxn(txn, req)
	})
	handleApply(f, structs.AllocClientUpdateRequestType, (*state.StateStore).ApplyAllocClientUpdate)
}
