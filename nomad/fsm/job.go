package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerJobCommands() {
	handleApply(f, structs.JobRegisterRequestType, (*state.StateStore).ApplyJobRegister)
	handleApply(f, structs.JobDeregisterRequestType, (*state.StateStore).ApplyJobDeregister)
	handleApply(f, structs.JobBatchDeregisterRequestType, (*state.StateStore).ApplyJobBatchDeregister)
	handleApply(f, structs.JobProtectionRequestType, (*state.StateStore).ApplyJobProtection)
	handle(f, structs.JobVersionTagRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.JobTagRequest) error {
		txn.Meta.Actor = req.Actor
		var tag *structs.JobVersionTag
		if !req.Unset {
			tag = req.Tag
		}
		return s.TagJobVersionTxn(txn, req.Namespace, req.JobID, req.Version, req.Name, tag)
	})
	handle(f, structs.ScalingEventRegisterRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ScalingEventRequest) error {
		return s.UpsertScalingEventTxn(txn, req)
	})
	handle(f, structs.JobStabilityRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.JobStabilityRequest) error {
		txn.Meta.Actor = req.Actor
		return s.SetJobStabilityTxn(txn, req.Namespace, req.JobID, req.JobVersion, req.Stable)
	})
}
