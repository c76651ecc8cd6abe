package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// registerCommands fills the dispatch table: each Raft message type and the state write that
// applies it. A write whose events credit an actor sets txn.Meta.Actor from the request.
func (f *FSM) registerCommands() {
	// Job
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

	// Eval
	handle(f, structs.EvalUpdateRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.EvalUpdateRequest) error {
		return s.UpsertEvalsTxn(txn, req.Evals)
	})
	handle(f, structs.EvalDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.EvalDeleteRequest) error {
		return s.DeleteEvalsTxn(txn, req.Evals)
	})

	// Namespace
	handle(f, structs.NamespaceUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.NamespaceUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertNamespacesTxn(txn, req.Namespaces)
	})
	handle(f, structs.NamespaceDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.NamespaceDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteNamespacesTxn(txn, req.Namespaces)
	})

	// ACL
	handle(f, structs.ACLPolicyUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLPolicyUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertACLPoliciesTxn(txn, req.Policies)
	})
	handle(f, structs.ACLPolicyDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLPolicyDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteACLPoliciesTxn(txn, req.Names)
	})
	handle(f, structs.ACLTokenUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLTokenUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertACLTokensTxn(txn, req.Tokens)
	})
	handle(f, structs.ACLTokenDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLTokenDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteACLTokensTxn(txn, req.AccessorIDs)
	})
	handle(f, structs.ACLTokenBootstrapRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLTokenBootstrapRequest) error {
		return s.BootstrapACLTokenTxn(txn, req.ResetIndex, req.Token)
	})
	handle(f, structs.ACLRoleUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLRoleUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertACLRolesTxn(txn, req.Roles)
	})
	handle(f, structs.ACLRoleDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLRoleDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteACLRolesTxn(txn, req.IDs)
	})
	handle(f, structs.OneTimeTokenUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.OneTimeTokenUpsertRequest) error {
		return s.UpsertOneTimeTokenTxn(txn, req.Token)
	})
	handle(f, structs.OneTimeTokenDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.OneTimeTokenDeleteRequest) error {
		return s.DeleteOneTimeTokensTxn(txn, req.Secrets, req.Exchange)
	})

	// ACLAuth
	handle(f, structs.ACLAuthMethodUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLAuthMethodUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertACLAuthMethodsTxn(txn, req.AuthMethods)
	})
	handle(f, structs.ACLAuthMethodDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLAuthMethodDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteACLAuthMethodsTxn(txn, req.Names)
	})
	handle(f, structs.ACLBindingRuleUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLBindingRuleUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertACLBindingRulesTxn(txn, req.BindingRules)
	})
	handle(f, structs.ACLBindingRuleDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLBindingRuleDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteACLBindingRulesTxn(txn, req.IDs)
	})

	// PurgeHistory
	handle(f, structs.PurgeRecordDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.PurgeRecordDeleteRequest) error {
		return s.DeletePurgeRecordsTxn(txn, req.IDs)
	})

	// Node
	// Each node write and the evaluations it makes are one state method, one transaction.
	handleApply(f, structs.NodeRegisterRequestType, (*state.StateStore).ApplyNodeRegister)
	handleApply(f, structs.NodeUpdateStatusRequestType, (*state.StateStore).ApplyNodeStatusUpdate)

	// NodeLifecycle
	handleApply(f, structs.NodeUpdateDrainRequestType, (*state.StateStore).ApplyNodeDrainUpdate)
	handle(f, structs.BatchNodeUpdateDrainRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.BatchNodeUpdateDrainRequest) error {
		return s.CompleteNodeDrainsTxn(txn, req.Complete, req.UpdatedAt)
	})
	handleApply(f, structs.NodeUpdateEligibilityRequestType, (*state.StateStore).ApplyNodeEligibilityUpdate)
	handleApply(f, structs.NodeDeregisterRequestType, (*state.StateStore).ApplyNodeDeregister)
	handleApply(f, structs.AllocUpdateDesiredTransitionRequestType, (*state.StateStore).ApplyAllocDesiredTransition)

	// Alloc
	// One scheduling decision and the evaluation that made it, together: a leader change can
	// never leave an evaluation complete without its allocations, or allocations placed twice.
	handle(f, structs.ApplyPlanResultsRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ApplyPlanResultsRequest) error {
		return s.ApplyPlanResultsTxn(txn, req)
	})
	handleApply(f, structs.AllocClientUpdateRequestType, (*state.StateStore).ApplyAllocClientUpdate)
	handleApply(f, structs.AllocDeleteRequestType, (*state.StateStore).ApplyAllocDelete)

	// Keyring
	handle(f, structs.KeyringUpsertRootKeyRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.KeyringUpsertRootKeyRequest) error {
		txn.Meta.Actor = structs.ActorKeyring
		return s.UpsertRootKeyTxn(txn, req.RootKey)
	})
	handle(f, structs.KeyringRotateRootKeyRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.KeyringRotateRootKeyRequest) error {
		txn.Meta.Actor = structs.ActorKeyring
		return s.RotateRootKeyTxn(txn, req.RootKey)
	})
	handle(f, structs.KeyringDeleteRootKeyRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.KeyringDeleteRootKeyRequest) error {
		txn.Meta.Actor = structs.ActorKeyring
		return s.DeleteRootKeyTxn(txn, req.KeyID)
	})

	// Deployment
	handleApply(f, structs.DeploymentStatusUpdateRequestType, (*state.StateStore).ApplyDeploymentStatusUpdate)
	handleApply(f, structs.DeploymentPromoteRequestType, (*state.StateStore).ApplyDeploymentPromotion)
	handleApply(f, structs.DeploymentAllocHealthRequestType, (*state.StateStore).ApplyDeploymentAllocHealth)

	// Autopilot
	// The answer is whether the configuration was stored; the caller reports Updated.
	handleAnswer(f, structs.AutopilotRequestType, (*state.StateStore).ApplyAutopilotSetConfig)

	// Variable
	// The answer is a *structs.VarApplyStateResponse: a failed check-and-set is an answer.
	handleAnswer(f, structs.VarApplyStateRequestType, (*state.StateStore).ApplyVariable)

	// NodePool
	handle(f, structs.NodePoolUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.NodePoolUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertNodePoolsTxn(txn, req.NodePools)
	})
	handle(f, structs.NodePoolDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.NodePoolDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteNodePoolsTxn(txn, req.Names)
	})

	// SchedulerConfig
	// The answer is whether the configuration was stored (false: the check-and-set failed).
	handleAnswer(f, structs.SchedulerConfigRequestType, (*state.StateStore).ApplySchedulerSetConfig)

	// ServiceRegistration
	handle(f, structs.ServiceRegistrationUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ServiceRegistrationUpsertRequest) error {
		return s.UpsertServiceRegistrationsTxn(txn, req.Services)
	})
	handle(f, structs.ServiceRegistrationDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ServiceRegistrationDeleteByIDRequest) error {
		return s.DeleteServiceRegistrationByIDTxn(txn, req.Namespace, req.ID)
	})

	// System
	handle(f, structs.ReconcileJobSummariesRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ReconcileJobSummariesRequest) error {
		txn.Meta.Actor = req.Actor
		return s.ReconcileJobSummariesTxn(txn)
	})

	// EventSink
	handle(f, structs.EventSinkUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.EventSinkUpsertRequest) error {
		return s.UpsertEventSinkTxn(txn, req.Sink)
	})
	handle(f, structs.EventSinkDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.EventSinkDeleteRequest) error {
		return s.DeleteEventSinkTxn(txn, req.ID)
	})
	handle(f, structs.EventSinkProgressRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.EventSinkProgressRequest) error {
		return s.UpdateEventSinkProgressTxn(txn, req)
	})
}
