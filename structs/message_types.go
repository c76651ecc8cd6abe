package structs

// MessageType names the request a Raft log entry carries (see EncodeEntry for the layout).
// Values stay at or below MaxMessageType: the values above are entry format markers.
type MessageType uint8

// Raft message types. Values are persisted in logs and snapshots: never renumber, only append.
const (
	JobRegisterRequestType                  MessageType = 0
	JobDeregisterRequestType                MessageType = 1
	JobBatchDeregisterRequestType           MessageType = 2
	EvalUpdateRequestType                   MessageType = 3
	EvalDeleteRequestType                   MessageType = 4
	JobVersionTagRequestType                MessageType = 5
	NamespaceUpsertRequestType              MessageType = 6
	NamespaceDeleteRequestType              MessageType = 7
	ACLPolicyUpsertRequestType              MessageType = 8
	ACLPolicyDeleteRequestType              MessageType = 9
	ACLTokenUpsertRequestType               MessageType = 10
	ACLTokenDeleteRequestType               MessageType = 11
	ACLTokenBootstrapRequestType            MessageType = 12
	ACLRoleUpsertRequestType                MessageType = 13
	ACLRoleDeleteRequestType                MessageType = 14
	PurgeRecordDeleteRequestType            MessageType = 15
	NodeRegisterRequestType                 MessageType = 16
	NodeUpdateStatusRequestType             MessageType = 17
	ApplyPlanResultsRequestType             MessageType = 18
	AllocClientUpdateRequestType            MessageType = 19
	KeyringUpsertRootKeyRequestType         MessageType = 20
	NodeUpdateDrainRequestType              MessageType = 21
	NodeUpdateEligibilityRequestType        MessageType = 22
	NodeDeregisterRequestType               MessageType = 23
	BatchNodeUpdateDrainRequestType         MessageType = 24
	AllocUpdateDesiredTransitionRequestType MessageType = 25
	OneTimeTokenUpsertRequestType           MessageType = 26
	OneTimeTokenDeleteRequestType           MessageType = 27
	DeploymentStatusUpdateRequestType       MessageType = 28
	DeploymentPromoteRequestType            MessageType = 29
	DeploymentAllocHealthRequestType        MessageType = 30
	AutopilotRequestType                    MessageType = 31
	KeyringRotateRootKeyRequestType         MessageType = 32
	KeyringDeleteRootKeyRequestType         MessageType = 33
	ScalingEventRegisterRequestType         MessageType = 34
	VarApplyStateRequestType                MessageType = 35
	NodePoolUpsertRequestType               MessageType = 36
	NodePoolDeleteRequestType               MessageType = 37
	SchedulerConfigRequestType              MessageType = 38
	ACLAuthMethodUpsertRequestType          MessageType = 39
	ACLAuthMethodDeleteRequestType          MessageType = 40
	ACLBindingRuleUpsertRequestType         MessageType = 41
	ACLBindingRuleDeleteRequestType         MessageType = 42
	JobStabilityRequestType                 MessageType = 43
	ServiceRegistrationUpsertRequestType    MessageType = 44
	ServiceRegistrationDeleteRequestType    MessageType = 45
	ReconcileJobSummariesRequestType        MessageType = 46
	JobProtectionRequestType                MessageType = 47
	EventSinkUpsertRequestType              MessageType = 48
	EventSinkDeleteRequestType              MessageType = 49
	EventSinkProgressRequestType            MessageType = 50
	AllocDeleteRequestType                  MessageType = 51
)

// MessageTypeInfo describes one Raft message type: its name for logs, the event Type its
// transactions publish ("" = the transaction publishes no events), and the request value its
// entries decode into.
type MessageTypeInfo struct {
	Name      string
	EventType string
	// New returns a fresh request of the type the FSM handler decodes. The leader decodes
	// every entry into it before raft.Apply, and the offline log tools use it, so an entry
	// is checked with exactly the FSM's decode; the FSM refuses a handler whose type differs.
	New func() any
}

func newRequest[T any]() any { return new(T) }

// MessageTypes is the single table of Raft message types. The FSM test fails when a type here
// has no handler, and the event code takes event Types from it.
var MessageTypes = map[MessageType]MessageTypeInfo{
	JobRegisterRequestType:            {Name: "JobRegister", EventType: "JobRegistered", New: newRequest[JobRegisterRequest]},
	JobDeregisterRequestType:          {Name: "JobDeregister", EventType: "JobDeregistered", New: newRequest[JobDeregisterRequest]},
	JobBatchDeregisterRequestType:     {Name: "JobBatchDeregister", EventType: "JobBatchDeregistered", New: newRequest[JobBatchDeregisterRequest]},
	EvalUpdateRequestType:             {Name: "EvalUpdate", EventType: "EvaluationUpdated", New: newRequest[EvalUpdateRequest]},
	EvalDeleteRequestType:             {Name: "EvalDelete", New: newRequest[EvalDeleteRequest]},
	JobVersionTagRequestType:          {Name: "JobVersionTag", EventType: "JobVersionTagged", New: newRequest[JobTagRequest]},
	NamespaceUpsertRequestType:        {Name: "NamespaceUpsert", EventType: "NamespaceUpserted", New: newRequest[NamespaceUpsertRequest]},
	NamespaceDeleteRequestType:        {Name: "NamespaceDelete", EventType: "NamespaceDeleted", New: newRequest[NamespaceDeleteRequest]},
	ACLPolicyUpsertRequestType:        {Name: "ACLPolicyUpsert", EventType: "ACLPolicyUpserted", New: newRequest[ACLPolicyUpsertRequest]},
	ACLPolicyDeleteRequestType:        {Name: "ACLPolicyDelete", EventType: "ACLPolicyDeleted", New: newRequest[ACLPolicyDeleteRequest]},
	ACLTokenUpsertRequestType:         {Name: "ACLTokenUpsert", EventType: "ACLTokenUpserted", New: newRequest[ACLTokenUpsertRequest]},
	ACLTokenDeleteRequestType:         {Name: "ACLTokenDelete", EventType: "ACLTokenDeleted", New: newRequest[ACLTokenDeleteRequest]},
	ACLTokenBootstrapRequestType:      {Name: "ACLTokenBootstrap", EventType: "ACLTokenUpserted", New: newRequest[ACLTokenBootstrapRequest]},
	ACLRoleUpsertRequestType:          {Name: "ACLRoleUpsert", EventType: "ACLRoleUpserted", New: newRequest[ACLRoleUpsertRequest]},
	ACLRoleDeleteRequestType:          {Name: "ACLRoleDelete", EventType: "ACLRoleDeleted", New: newRequest[ACLRoleDeleteRequest]},
	PurgeRecordDeleteRequestType:      {Name: "PurgeRecordDelete", EventType: "PurgeRecordDeleted", New: newRequest[PurgeRecordDeleteRequest]},
	NodeRegisterRequestType:           {Name: "NodeRegister", EventType: "NodeRegistration", New: newRequest[NodeRegisterRequest]},
	NodeUpdateStatusRequestType:       {Name: "NodeUpdateStatus", EventType: "NodeStreamEvent", New: newRequest[NodeUpdateStatusRequest]},
	ApplyPlanResultsRequestType:       {Name: "ApplyPlanResults", EventType: "PlanResult", New: newRequest[ApplyPlanResultsRequest]},
	AllocClientUpdateRequestType:      {Name: "AllocClientUpdate", EventType: "AllocationUpdated", New: newRequest[AllocUpdateRequest]},
	DeploymentStatusUpdateRequestType: {Name: "DeploymentStatusUpdate", EventType: "DeploymentStatusUpdate", New: newRequest[DeploymentStatusUpdateRequest]},
	DeploymentPromoteRequestType:      {Name: "DeploymentPromotion", EventType: "DeploymentPromotion", New: newRequest[DeploymentPromoteRequest]},
	DeploymentAllocHealthRequestType:  {Name: "DeploymentAllocHealth", EventType: "DeploymentAllocHealth", New: newRequest[DeploymentAllocHealthRequest]},
	// No events: a root key holds private key material (see structs/keyring.go).
	KeyringUpsertRootKeyRequestType: {Name: "KeyringUpsertRootKey", New: newRequest[KeyringUpsertRootKeyRequest]},
	// Eligibility changes publish NodeDrain too, as upstream's do.
	NodeUpdateDrainRequestType:       {Name: "NodeUpdateDrain", EventType: "NodeDrain", New: newRequest[NodeUpdateDrainRequest]},
	NodeUpdateEligibilityRequestType: {Name: "NodeUpdateEligibility", EventType: "NodeDrain", New: newRequest[NodeUpdateEligibilityRequest]},
	NodeDeregisterRequestType:        {Name: "NodeDeregister", EventType: "NodeDeregistration", New: newRequest[NodeDeregisterRequest]},
	BatchNodeUpdateDrainRequestType:  {Name: "BatchNodeUpdateDrain", EventType: "NodeDrain", New: newRequest[BatchNodeUpdateDrainRequest]},
	AllocUpdateDesiredTransitionRequestType: {Name: "AllocUpdateDesiredTransition", EventType: "AllocationUpdateDesiredStatus",
		New: newRequest[AllocUpdateDesiredTransitionRequest]},
	// No events: a one-time token is a secret.
	OneTimeTokenUpsertRequestType: {Name: "OneTimeTokenUpsert", New: newRequest[OneTimeTokenUpsertRequest]},
	OneTimeTokenDeleteRequestType: {Name: "OneTimeTokenDelete", New: newRequest[OneTimeTokenDeleteRequest]},
	// No events: upstream publishes none for operator configuration.
	AutopilotRequestType:            {Name: "Autopilot", New: newRequest[AutopilotSetConfigRequest]},
	ScalingEventRegisterRequestType: {Name: "ScalingEventRegister", New: newRequest[ScalingEventRequest]},
	KeyringRotateRootKeyRequestType: {Name: "KeyringRotateRootKey", New: newRequest[KeyringRotateRootKeyRequest]},
	KeyringDeleteRootKeyRequestType: {Name: "KeyringDeleteRootKey", New: newRequest[KeyringDeleteRootKeyRequest]},
	// A delete publishes VariableDeleted: the converter names it (state/variables_events.go).
	VarApplyStateRequestType:  {Name: "VarApplyState", EventType: "VariableUpserted", New: newRequest[VarApplyStateRequest]},
	NodePoolUpsertRequestType: {Name: "NodePoolUpsert", EventType: "NodePoolUpserted", New: newRequest[NodePoolUpsertRequest]},
	NodePoolDeleteRequestType: {Name: "NodePoolDelete", EventType: "NodePoolDeleted", New: newRequest[NodePoolDeleteRequest]},
	// No events, as upstream: the configuration is read from its endpoint.
	SchedulerConfigRequestType: {Name: "SchedulerConfig", New: newRequest[SchedulerSetConfigRequest]},
	// A method's event carries it with its secrets redacted. Deleting a method deletes its
	// binding rules in the same transaction: their events share the ACLAuthMethodDeleted type.
	ACLAuthMethodUpsertRequestType:  {Name: "ACLAuthMethodUpsert", EventType: "ACLAuthMethodUpserted", New: newRequest[ACLAuthMethodUpsertRequest]},
	ACLAuthMethodDeleteRequestType:  {Name: "ACLAuthMethodDelete", EventType: "ACLAuthMethodDeleted", New: newRequest[ACLAuthMethodDeleteRequest]},
	ACLBindingRuleUpsertRequestType: {Name: "ACLBindingRuleUpsert", EventType: "ACLBindingRuleUpserted", New: newRequest[ACLBindingRuleUpsertRequest]},
	// A stability change publishes no event, as upstream; the next job event carries it.
	JobStabilityRequestType:         {Name: "JobStability", New: newRequest[JobStabilityRequest]},
	ACLBindingRuleDeleteRequestType: {Name: "ACLBindingRuleDelete", EventType: "ACLBindingRuleDeleted", New: newRequest[ACLBindingRuleDeleteRequest]},
	// The Service converter names the type of each event (a removal is ServiceDeregistration
	// whatever write made it), as upstream.
	ServiceRegistrationUpsertRequestType: {Name: "ServiceRegistrationUpsert", EventType: TypeServiceRegistration,
		New: newRequest[ServiceRegistrationUpsertRequest]},
	ServiceRegistrationDeleteRequestType: {Name: "ServiceRegistrationDeleteByID", EventType: TypeServiceDeregistration,
		New: newRequest[ServiceRegistrationDeleteByIDRequest]},
	// No events: summaries are derived counts (state/events.go).
	ReconcileJobSummariesRequestType: {Name: "ReconcileJobSummaries", New: newRequest[ReconcileJobSummariesRequest]},
	JobProtectionRequestType:         {Name: "JobProtection", EventType: TypeJobProtectionChanged, New: newRequest[JobProtectionRequest]},
	// No events: a sink holds its secret, and a sink's progress published as an event would
	// be delivered by the sink itself, which would then record progress again, forever.
	EventSinkUpsertRequestType:   {Name: "EventSinkUpsert", New: newRequest[EventSinkUpsertRequest]},
	EventSinkDeleteRequestType:   {Name: "EventSinkDelete", New: newRequest[EventSinkDeleteRequest]},
	EventSinkProgressRequestType: {Name: "EventSinkProgress", New: newRequest[EventSinkProgressRequest]},
	// No events, as upstream's evaluation GC, which collects allocations too: each allocation
	// already published how it ended, and a deleted row is not an update of it.
	AllocDeleteRequestType: {Name: "AllocDelete", New: newRequest[AllocDeleteRequest]},
}

func (t MessageType) String() string {
	if info, ok := MessageTypes[t]; ok {
		return info.Name
	}
	return "Unknown"
}
