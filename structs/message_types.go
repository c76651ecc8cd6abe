package structs

// MessageType is the first byte of every Raft log entry; the rest is the msgpack request.
type MessageType uint8

// Raft message types. Values are persisted in logs and snapshots: never renumber, only append.
const (
	JobRegisterRequestType        MessageType = 0
	JobDeregisterRequestType      MessageType = 1
	JobBatchDeregisterRequestType MessageType = 2
	EvalUpdateRequestType         MessageType = 3
	EvalDeleteRequestType         MessageType = 4
	JobVersionTagRequestType      MessageType = 5
	NamespaceUpsertRequestType    MessageType = 6
	NamespaceDeleteRequestType    MessageType = 7
	ACLPolicyUpsertRequestType    MessageType = 8
	ACLPolicyDeleteRequestType    MessageType = 9
	ACLTokenUpsertRequestType     MessageType = 10
	ACLTokenDeleteRequestType     MessageType = 11
	ACLTokenBootstrapRequestType  MessageType = 12
	ACLRoleUpsertRequestType      MessageType = 13
	ACLRoleDeleteRequestType      MessageType = 14
	PurgeRecordDeleteRequestType  MessageType = 15
	NodeRegisterRequestType       MessageType = 16
	NodeUpdateStatusRequestType   MessageType = 17
	ApplyPlanResultsRequestType   MessageType = 18
	AllocClientUpdateRequestType  MessageType = 19
)

// MessageTypeInfo describes one Raft message type: its name for logs and the event Type its
// transactions publish ("" = the transaction publishes no events).
type MessageTypeInfo struct {
	Name      string
	EventType string
}

// MessageTypes is the single table of Raft message types. The FSM test fails when a type here
// has no handler, and the event code takes event Types from it.
var MessageTypes = map[MessageType]MessageTypeInfo{
	JobRegisterRequestType:        {Name: "JobRegister", EventType: "JobRegistered"},
	JobDeregisterRequestType:      {Name: "JobDeregister", EventType: "JobDeregistered"},
	JobBatchDeregisterRequestType: {Name: "JobBatchDeregister", EventType: "JobBatchDeregistered"},
	EvalUpdateRequestType:         {Name: "EvalUpdate", EventType: "EvaluationUpdated"},
	EvalDeleteRequestType:         {Name: "EvalDelete"},
	JobVersionTagRequestType:      {Name: "JobVersionTag", EventType: "JobVersionTagged"},
	NamespaceUpsertRequestType:    {Name: "NamespaceUpsert", EventType: "NamespaceUpserted"},
	NamespaceDeleteRequestType:    {Name: "NamespaceDelete", EventType: "NamespaceDeleted"},
	ACLPolicyUpsertRequestType:    {Name: "ACLPolicyUpsert", EventType: "ACLPolicyUpserted"},
	ACLPolicyDeleteRequestType:    {Name: "ACLPolicyDelete", EventType: "ACLPolicyDeleted"},
	ACLTokenUpsertRequestType:     {Name: "ACLTokenUpsert", EventType: "ACLTokenUpserted"},
	ACLTokenDeleteRequestType:     {Name: "ACLTokenDelete", EventType: "ACLTokenDeleted"},
	ACLTokenBootstrapRequestType:  {Name: "ACLTokenBootstrap", EventType: "ACLTokenUpserted"},
	ACLRoleUpsertRequestType:      {Name: "ACLRoleUpsert", EventType: "ACLRoleUpserted"},
	ACLRoleDeleteRequestType:      {Name: "ACLRoleDelete", EventType: "ACLRoleDeleted"},
	PurgeRecordDeleteRequestType:  {Name: "PurgeRecordDelete"},
	NodeRegisterRequestType:       {Name: "NodeRegister", EventType: "NodeRegistration"},
	NodeUpdateStatusRequestType:   {Name: "NodeUpdateStatus", EventType: "NodeStreamEvent"},
	ApplyPlanResultsRequestType:   {Name: "ApplyPlanResults", EventType: "PlanResult"},
	AllocClientUpdateRequestType:  {Name: "AllocClientUpdate", EventType: "AllocationUpdated"},
}

func (t MessageType) String() string {
	if info, ok := MessageTypes[t]; ok {
		return info.Name
	}
	return "Unknown"
}
