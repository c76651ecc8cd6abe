package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// eventConverter turns one changed row of its table into events. It sees the transaction for
// its message type and request metadata (purge flag, actor).
type eventConverter func(txn *Txn, change memdb.Change) []structs.Event

// eventConverters has one entry per table; nil marks a table that deliberately publishes no
// events. TestEventConverters_CoverEveryTable fails when a table is in neither state.
var eventConverters = map[string]eventConverter{
	tableIndex:         nil, // bookkeeping, not an object
	tableJobs:          jobEvents,
	tableJobVersion:    jobVersionEvents,
	tableJobProtection: jobProtectionEvents,
	tableJobSummary:    nil, // derived counts; the Job and Allocation events carry the cause
	// An input of those counts: the allocations it tallies published how they ended.
	tableJobCollectedAllocs: nil,
	tableJobSubmission:      nil, // a job's source, read on demand; the Job event marks the change
	tableScalingEvents:      nil, // read through the scale status; the Job event marks a count change
	tableEvals:              evalEvents,
	tableNamespaces:         namespaceEvents,
	tableACLPolicies:        aclPolicyEvents,
	tableACLTokens:          aclTokenEvents,
	tableACLRoles:           aclRoleEvents,
	tablePurgeHistory:       purgeRecordEvents,
	tablePurgeChain:         nil, // the chain's bookkeeping; the PurgeRecord events carry the records
	tableAllocs:             allocEvents,
	tableNodes:              nodeEvents,
	tableDeployments:        deploymentEvents,
	tableRootKeys:           nil, // rows hold private key material: never published
	tableOneTimeTokens:      nil, // rows are secrets: never published
	tableAutopilot:          nil, // operator configuration: upstream publishes no events for it
	tableVariables:          variableEvents,
	tableNodePools:          nodePoolEvents,
	// Derived from a job's scaling blocks in the job's own write: the job event carries them.
	tableScalingPolicies: nil,
	tableSchedulerConfig: nil, // settings, read from their endpoint (as upstream: no events)
	tableACLAuthMethods:  aclAuthMethodEvents,
	tableACLBindingRules: aclBindingRuleEvents,
	// A removal is a ServiceDeregistration whichever write made it.
	tableServiceRegistrations: serviceRegistrationEvents,
	// Leader bookkeeping written with the child it launched: the child's Job event marks it
	// (upstream publishes none either).
	tablePeriodicLaunch: nil,
	// A sink holds its secret; its progress is the leader's bookkeeping of deliveries.
	tableEventSinks: nil,
}

// EventsFromChanges derives the batch of events of one committed transaction. A transaction
// whose message type has no event Type publishes nothing.
func EventsFromChanges(txn *Txn, changes memdb.Changes) *structs.Events {
	eventType := structs.MessageTypes[txn.MsgType].EventType
	if eventType == "" {
		return nil
	}
	var events []structs.Event
	for _, change := range changes {
		conv := eventConverters[change.Table]
		if conv == nil {
			continue
		}
		for _, e := range conv(txn, change) {
			if e.Type == "" {
				e.Type = eventType
			}
			e.Index = txn.Index
			events = append(events, e)
		}
	}
	if len(events) == 0 {
		return nil
	}
	return &structs.Events{Index: txn.Index, Events: events}
}

func jobEvents(txn *Txn, change memdb.Change) []structs.Event {
	// Purge is what the request asked for (the deregister's flag, true for the GC), carried
	// in the transaction's metadata; Deleted says the row is gone (for a removal, Job is the
	// row as it was just before). They differ for a write that removes a job row without a
	// purge request, and a tool alerting on purges must not be told one happened then.
	job := rowOf[*structs.Job](change)
	payload := &structs.JobEvent{
		Job: job, Actor: txn.Meta.Actor, ForcedBy: txn.Meta.ForcedBy,
		Purge: txn.Meta.Purge, Deleted: change.Deleted(),
	}
	return []structs.Event{{Topic: structs.TopicJob, Key: job.ID, Namespace: job.Namespace, Payload: payload}}
}

func evalEvents(_ *Txn, change memdb.Change) []structs.Event {
	if change.Deleted() {
		return nil
	}
	eval := change.After.(*structs.Evaluation)
	return []structs.Event{{
		Topic:      structs.TopicEvaluation,
		Key:        eval.ID,
		Namespace:  eval.Namespace,
		FilterKeys: []string{eval.JobID, eval.DeploymentID},
		Payload:    &structs.EvaluationEvent{Evaluation: eval},
	}}
}

// allocEvents publishes an allocation without its job. A deleted allocation (its job was
// purged) is published as it was last, so subscribers see how it ended.
func allocEvents(_ *Txn, change memdb.Change) []structs.Event {
	alloc := *rowOf[*structs.Allocation](change)
	alloc.Job = nil
	return []structs.Event{{
		Topic:      structs.TopicAllocation,
		Key:        alloc.ID,
		Namespace:  alloc.Namespace,
		FilterKeys: []string{alloc.JobID, alloc.DeploymentID},
		Payload:    &structs.AllocationEvent{Allocation: &alloc},
	}}
}

func deploymentEvents(_ *Txn, change memdb.Change) []structs.Event {
	d := rowOf[*structs.Deployment](change)
	return []structs.Event{{
		Topic:      structs.TopicDeployment,
		Key:        d.ID,
		Namespace:  d.Namespace,
		FilterKeys: []string{d.JobID},
		Payload:    &structs.DeploymentEvent{Deployment: d},
	}}
}

func nodeEvents(_ *Txn, change memdb.Change) []structs.Event {
	node := rowOf[*structs.Node](change)
	// Subscribers must never see the node's secret.
	return []structs.Event{{Topic: structs.TopicNode, Key: node.ID, Payload: &structs.NodeStreamEvent{Node: node.Sanitized()}}}
}

func namespaceEvents(_ *Txn, change memdb.Change) []structs.Event {
	ns := rowOf[*structs.Namespace](change)
	return []structs.Event{{Topic: structs.TopicNamespace, Key: ns.Name, Payload: &structs.NamespaceEvent{Namespace: ns}}}
}

func aclPolicyEvents(_ *Txn, change memdb.Change) []structs.Event {
	p := rowOf[*structs.ACLPolicy](change)
	return []structs.Event{{Topic: structs.TopicACLPolicy, Key: p.Name, Payload: &structs.ACLPolicyEvent{ACLPolicy: p}}}
}

func aclTokenEvents(_ *Txn, change memdb.Change) []structs.Event {
	t := rowOf[*structs.ACLToken](change)
	// Subscribers must never see a secret: publish a copy without it.
	return []structs.Event{{Topic: structs.TopicACLToken, Key: t.AccessorID, Payload: &structs.ACLTokenEvent{ACLToken: t.Sanitized()}}}
}

func aclRoleEvents(_ *Txn, change memdb.Change) []structs.Event {
	r := rowOf[*structs.ACLRole](change)
	return []structs.Event{{Topic: structs.TopicACLRole, Key: r.ID, FilterKeys: []string{r.Name}, Payload: &structs.ACLRoleEvent{ACLRole: r}}}
}

func aclAuthMethodEvents(_ *Txn, change memdb.Change) []structs.Event {
	m := rowOf[*structs.ACLAuthMethod](change)
	// Subscribers must never see a secret: publish a redacted copy.
	return []structs.Event{{Topic: structs.TopicACLAuthMethod, Key: m.Name, Payload: &structs.ACLAuthMethodEvent{AuthMethod: m.Sanitized()}}}
}

func aclBindingRuleEvents(_ *Txn, change memdb.Change) []structs.Event {
	r := rowOf[*structs.ACLBindingRule](change)
	return []structs.Event{{Topic: structs.TopicACLBindingRule, Key: r.ID, FilterKeys: []string{r.AuthMethod},
		Payload: &structs.ACLBindingRuleEvent{ACLBindingRule: r}}}
}

// purgeRecordEvents publishes a purge-history record when a purge or GC writes it and when
// retention removes it, without the job spec (the job event of the purge carries that). When
// a client reports the end of an allocation whose job is gone, the record takes the report and
// the allocation is published on the Allocation topic as any other allocation update.
func purgeRecordEvents(txn *Txn, change memdb.Change) []structs.Event {
	rec := rowOf[*structs.PurgeRecord](change)
	if change.Updated() {
		var out []structs.Event
		for _, a := range rec.Allocations {
			if a.ModifyIndex != txn.Index {
				continue
			}
			alloc := a.Allocation(rec)
			out = append(out, structs.Event{
				Topic: structs.TopicAllocation, Key: alloc.ID, Namespace: alloc.Namespace,
				FilterKeys: []string{alloc.JobID}, Payload: &structs.AllocationEvent{Allocation: alloc},
			})
		}
		return out
	}
	return []structs.Event{{
		Topic:      structs.TopicPurgeRecord,
		Key:        rec.ID,
		Namespace:  rec.Namespace,
		FilterKeys: []string{rec.JobID},
		Payload:    &structs.PurgeRecordEvent{PurgeRecord: rec.Stub()},
	}}
}

// rowOf returns the row after the change, or before it for a delete.
func rowOf[T any](change memdb.Change) T {
	if change.Deleted() {
		return change.Before.(T)
	}
	return change.After.(T)
}

// variableEvents publishes a variable's metadata only: its items never leave the servers in
// an event, not even encrypted.
func variableEvents(_ *Txn, change memdb.Change) []structs.Event {
	v := rowOf[*structs.VariableEncrypted](change)
	meta := v.VariableMetadata.Copy()
	e := structs.Event{Topic: structs.TopicVariables, Key: v.Path, Namespace: v.Namespace,
		Payload: &structs.VariableEvent{Variable: &meta}}
	if change.Deleted() {
		e.Type = structs.TypeVariableDeleted
	}
	return []structs.Event{e}
}

func nodePoolEvents(_ *Txn, change memdb.Change) []structs.Event {
	p := rowOf[*structs.NodePool](change)
	return []structs.Event{{Topic: structs.TopicNodePool, Key: p.Name, Payload: &structs.NodePoolEvent{NodePool: p}}}
}

// serviceRegistrationEvents publishes a registration as upstream does: Key the registration
// ID, FilterKeys its job and service name (so `topic=Service:<name>` follows one service),
// and the type from the change itself, since a removal also comes from writes about
// allocations, jobs and nodes.
func serviceRegistrationEvents(_ *Txn, change memdb.Change) []structs.Event {
	svc := rowOf[*structs.ServiceRegistration](change)
	typ := structs.TypeServiceRegistration
	if change.Deleted() {
		typ = structs.TypeServiceDeregistration
	}
	return []structs.Event{{
		Topic: structs.TopicService, Type: typ, Key: svc.ID, Namespace: svc.Namespace,
		FilterKeys: []string{svc.JobID, svc.ServiceName},
		Payload:    &structs.ServiceRegistrationStreamEvent{Service: svc},
	}}
}
