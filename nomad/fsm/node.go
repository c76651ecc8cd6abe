package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Each node write and the evaluations it makes are one state method, one transaction.
func (f *FSM) registerNodeCommands() {
	handleApply(f, structs.NodeRegisterRequestType, (*state.StateStore).ApplyNodeRegister)
	handleApply(f, structs.NodeUpdateStatusRequestType, (*state.StateStore).ApplyNodeStatusUpdate)
}

func (f *FSM) registerNodeLifecycleCommands() {
	handleApply(f, structs.NodeUpdateDrainRequestType, (*state.StateStore).ApplyNodeDrainUpdate)
	handle(f, structs.BatchNodeUpdateDrainRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.BatchNodeUpdateDrainRequest) error {
		return s.CompleteNodeDrainsTxn(txn, req.Complete, req.UpdatedAt)
	})
	handleApply(f, structs.NodeUpdateEligibilityRequestType, (*state.StateStore).ApplyNodeEligibilityUpdate)
	handleApply(f, structs.NodeDeregisterRequestType, (*state.StateStore).ApplyNodeDeregister)
	handleApply(f, structs.AllocUpdateDesiredTransitionRequestType, (*state.StateStore).ApplyAllocDesiredTransition)
}
