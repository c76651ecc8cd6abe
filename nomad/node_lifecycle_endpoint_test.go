package nomad

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// nodeEventSeen is what a subscriber learns from one Node event.
type nodeEventSeen struct {
	Type   string
	NodeID string
	Drain  bool
	Elig   string
}

// nodeEventsOf runs op and returns the Node events it published, read up to a fence node's
// registration, so a call that publishes nothing is seen to publish nothing.
func nodeEventsOf(t *testing.T, srv *Server, op func() error) []nodeEventSeen {
	t.Helper()
	sub, err := srv.EventBroker().Subscribe(&stream.SubscribeRequest{
		Topics:    map[structs.Topic][]string{structs.TopicNode: {"*"}},
		Namespace: structs.AllNamespacesSentinel,
		Index:     srv.raft.AppliedIndex(),
	})
	must.NoError(t, err)
	defer sub.Unsubscribe()
	must.NoError(t, op())
	fence := mock.Node("fence")
	fence.SecretID = "fence-" + time.Now().String()
	fence.ID = "fence-" + fence.SecretID[len(fence.SecretID)-6:]
	registerNode(t, srv, fence, "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var seen []nodeEventSeen
	for {
		batch, err := sub.Next(ctx)
		must.NoError(t, err)
		for _, e := range batch.Events {
			n := e.Payload.(*structs.NodeStreamEvent).Node
			if n.ID == fence.ID {
				return seen
			}
			must.Eq(t, "", n.SecretID)
			seen = append(seen, nodeEventSeen{Type: e.Type, NodeID: n.ID, Drain: n.Drain, Elig: n.SchedulingEligibility})
		}
	}
}

func drainNode(srv *Server, token, id string, spec *api.DrainSpec, markEligible bool) (*structs.NodeDrainUpdateResponse, error) {
	args := &structs.NodeUpdateDrainRequest{NodeID: id, MarkEligible: markEligible, Meta: map[string]string{"reason": "test"},
		WriteRequest: structs.WriteRequest{AuthToken: token}}
	if spec != nil {
		args.DrainStrategy = &api.DrainStrategy{DrainSpec: *spec}
	}
	var reply structs.NodeDrainUpdateResponse
	return &reply, srv.Endpoints.Node.UpdateDrain(args, &reply)
}

func setEligibility(srv *Server, token, id, elig string) (*structs.NodeDrainUpdateResponse, error) {
	var reply structs.NodeDrainUpdateResponse
	return &reply, srv.Endpoints.Node.UpdateEligibility(&structs.NodeUpdateEligibilityRequest{
		NodeID: id, Eligibility: elig, WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
}

// holdDrain places a running batch allocation on the node: the drainer leaves it until the
// drain's deadline, so a drain of the node stays in progress while a test looks at it.
func holdDrain(t *testing.T, srv *Server, token, nodeID string) {
	t.Helper()
	job := mock.BatchJob("hold-" + nodeID)
	registerJob(t, srv, token, job)
	stored, err := srv.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	testPlaceAllocs(t, srv, stored, &structs.Allocation{ID: "hold-" + nodeID, Name: job.ID + ".web[0]", TaskGroup: "web",
		NodeID: nodeID, ClientStatus: structs.AllocClientStatusRunning})
}

func TestNode_UpdateDrain(t *testing.T) {
	srv := testServer(t, nil)
	registerNode(t, srv, mock.Node("n1"), "")
	holdDrain(t, srv, "", "n1")

	before := time.Now().Add(-time.Second)
	var reply *structs.NodeDrainUpdateResponse
	events := nodeEventsOf(t, srv, func() (err error) {
		reply, err = drainNode(srv, "", "n1", &api.DrainSpec{Deadline: time.Minute}, false)
		return err
	})
	must.Eq(t, []nodeEventSeen{{Type: "NodeDrain", NodeID: "n1", Drain: true, Elig: structs.NodeSchedulingIneligible}}, events)
	node, err := srv.State().NodeByID(nil, "n1")
	must.NoError(t, err)
	must.Eq(t, reply.NodeModifyIndex, node.ModifyIndex)
	must.True(t, node.Drain)
	must.Eq(t, structs.NodeSchedulingIneligible, node.SchedulingEligibility)
	must.NotNil(t, node.DrainStrategy)
	must.Eq(t, time.Minute, node.DrainStrategy.ForceDeadline.Sub(node.DrainStrategy.StartedAt))
	must.True(t, node.DrainStrategy.StartedAt.After(before))
	must.NotNil(t, node.LastDrain)
	must.Eq(t, api.DrainStatusDraining, node.LastDrain.Status)
	must.Eq(t, map[string]string{"reason": "test"}, node.LastDrain.Meta)
	must.False(t, node.Schedulable())
	started := node.LastDrain.StartedAt

	// An update keeps when the drain started.
	_, err = drainNode(srv, "", "n1", &api.DrainSpec{Deadline: time.Hour}, false)
	must.NoError(t, err)
	node, err = srv.State().NodeByID(nil, "n1")
	must.NoError(t, err)
	must.Eq(t, started, node.LastDrain.StartedAt)
	deadline, ok := structs.DrainDeadline(node.DrainStrategy)
	must.True(t, ok)
	must.Eq(t, node.DrainStrategy.StartedAt.Add(time.Hour), deadline)

	// A draining node cannot be made eligible.
	_, err = setEligibility(srv, "", "n1", structs.NodeSchedulingEligible)
	must.Eq(t, http.StatusBadRequest, structs.ErrorCode(err))

	// Cancelling with MarkEligible: eligible again, the drain recorded as cancelled.
	events = nodeEventsOf(t, srv, func() error {
		_, err := drainNode(srv, "", "n1", nil, true)
		return err
	})
	must.Eq(t, []nodeEventSeen{{Type: "NodeDrain", NodeID: "n1", Elig: structs.NodeSchedulingEligible}}, events)
	node, err = srv.State().NodeByID(nil, "n1")
	must.NoError(t, err)
	must.False(t, node.Drain)
	must.Nil(t, node.DrainStrategy)
	must.Eq(t, api.DrainStatusCanceled, node.LastDrain.Status)
	must.True(t, node.Schedulable())

	_, err = drainNode(srv, "", "nope", &api.DrainSpec{}, false)
	must.Eq(t, http.StatusNotFound, structs.ErrorCode(err))
}

func TestNode_UpdateEligibility(t *testing.T) {
	srv := testServer(t, nil)
	registerNode(t, srv, mock.Node("n1"), "")
	sys := mock.SystemJob("sys")
	registerJob(t, srv, "", sys)

	events := nodeEventsOf(t, srv, func() error {
		_, err := setEligibility(srv, "", "n1", structs.NodeSchedulingIneligible)
		return err
	})
	must.Eq(t, []nodeEventSeen{{Type: "NodeDrain", NodeID: "n1", Elig: structs.NodeSchedulingIneligible}}, events)

	// Unchanged: nothing written.
	index := srv.State().Index("nodes")
	_, err := setEligibility(srv, "", "n1", structs.NodeSchedulingIneligible)
	must.NoError(t, err)
	must.Eq(t, index, srv.State().Index("nodes"))

	// Eligible again: the system job gets an evaluation for the node.
	reply, err := setEligibility(srv, "", "n1", structs.NodeSchedulingEligible)
	must.NoError(t, err)
	must.SliceLen(t, 1, reply.EvalIDs)
	eval, err := srv.State().EvalByID(nil, reply.EvalIDs[0])
	must.NoError(t, err)
	must.Eq(t, "sys", eval.JobID)
	must.Eq(t, "n1", eval.NodeID)

	cases := []struct {
		name string
		node string
		elig string
		code int
	}{
		{name: "bad value names the field", node: "n1", elig: "maybe", code: http.StatusBadRequest},
		{name: "empty value", node: "n1", elig: "", code: http.StatusBadRequest},
		{name: "unknown node", node: "nope", elig: structs.NodeSchedulingEligible, code: http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			index := srv.State().LatestIndex()
			_, err := setEligibility(srv, "", tc.node, tc.elig)
			must.Eq(t, tc.code, structs.ErrorCode(err))
			if tc.code == http.StatusBadRequest {
				must.StrContains(t, err.Error(), "Eligibility")
			}
			must.Eq(t, index, srv.State().LatestIndex())
		})
	}
}

// A purge removes the node; what ran there is lost and its job evaluated again.
func TestNode_Deregister(t *testing.T) {
	srv := testServer(t, nil)
	registerNode(t, srv, mock.Node("n1"), "")
	job := mock.Job()
	registerJob(t, srv, "", job)
	stored, err := srv.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	alloc := &structs.Allocation{ID: "a1", Name: "web.web[0]", TaskGroup: "web", NodeID: "n1", ClientStatus: structs.AllocClientStatusRunning}
	testPlaceAllocs(t, srv, stored, alloc)

	var reply structs.NodeUpdateResponse
	events := nodeEventsOf(t, srv, func() error {
		return srv.Endpoints.Node.Deregister(&structs.NodeDeregisterRequest{NodeIDs: []string{"n1"}}, &reply)
	})
	must.Eq(t, []nodeEventSeen{{Type: "NodeDeregistration", NodeID: "n1", Elig: structs.NodeSchedulingEligible}}, events)
	node, err := srv.State().NodeByID(nil, "n1")
	must.NoError(t, err)
	must.Nil(t, node)
	a, err := srv.State().AllocByID(nil, "a1")
	must.NoError(t, err)
	must.Eq(t, structs.AllocClientStatusLost, a.ClientStatus)
	must.SliceLen(t, 1, reply.EvalIDs)
	eval, err := srv.State().EvalByID(nil, reply.EvalIDs[0])
	must.NoError(t, err)
	must.Eq(t, job.ID, eval.JobID)
	must.Positive(t, reply.Index)

	err = srv.Endpoints.Node.Deregister(&structs.NodeDeregisterRequest{NodeIDs: []string{"n1"}}, &reply)
	must.Eq(t, http.StatusNotFound, structs.ErrorCode(err))
}

func TestNode_Evaluate(t *testing.T) {
	srv := testServer(t, nil)
	registerNode(t, srv, mock.Node("n1"), "")

	// Nothing on the node: nothing written.
	index := srv.State().LatestIndex()
	var reply structs.NodeUpdateResponse
	must.NoError(t, srv.Endpoints.Node.Evaluate(&structs.NodeEvaluateRequest{NodeID: "n1"}, &reply))
	must.SliceEmpty(t, reply.EvalIDs)
	must.Eq(t, index, srv.State().LatestIndex())

	job := mock.Job()
	registerJob(t, srv, "", job)
	stored, err := srv.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	testPlaceAllocs(t, srv, stored, &structs.Allocation{ID: "a1", Name: "web.web[0]", TaskGroup: "web", NodeID: "n1"})
	must.NoError(t, srv.Endpoints.Node.Evaluate(&structs.NodeEvaluateRequest{NodeID: "n1"}, &reply))
	must.SliceLen(t, 1, reply.EvalIDs)
	eval, err := srv.State().EvalByID(nil, reply.EvalIDs[0])
	must.NoError(t, err)
	must.Eq(t, job.ID, eval.JobID)
	must.Eq(t, structs.EvalTriggerNodeUpdate, eval.TriggeredBy)

	err = srv.Endpoints.Node.Evaluate(&structs.NodeEvaluateRequest{NodeID: "nope"}, &reply)
	must.Eq(t, http.StatusNotFound, structs.ErrorCode(err))
}

// Node write is needed for every lifecycle call, and a node's own secret is not enough.
func TestNode_LifecycleACL(t *testing.T) {
	srv, root := testACLServer(t, nil)
	registerNode(t, srv, mock.Node("n1"), root)
	holdDrain(t, srv, root, "n1")
	reader := clientToken(t, srv, root, "node-reader", `node { policy = "read" }`)
	writer := clientToken(t, srv, root, "node-writer", `node { policy = "write" }`)
	calls := []struct {
		name string
		call func(token string) error
	}{
		{name: "drain", call: func(tok string) error { _, err := drainNode(srv, tok, "n1", &api.DrainSpec{}, false); return err }},
		{name: "eligibility", call: func(tok string) error {
			_, err := setEligibility(srv, tok, "n1", structs.NodeSchedulingIneligible)
			return err
		}},
		{name: "evaluate", call: func(tok string) error {
			var r structs.NodeUpdateResponse
			return srv.Endpoints.Node.Evaluate(&structs.NodeEvaluateRequest{NodeID: "n1", WriteRequest: structs.WriteRequest{AuthToken: tok}}, &r)
		}},
		{name: "purge", call: func(tok string) error {
			var r structs.NodeUpdateResponse
			return srv.Endpoints.Node.Deregister(&structs.NodeDeregisterRequest{NodeIDs: []string{"n1"}, WriteRequest: structs.WriteRequest{AuthToken: tok}}, &r)
		}},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			for _, tok := range []string{"", reader.SecretID, "secret-n1"} {
				index := srv.State().LatestIndex()
				err := tc.call(tok)
				must.Eq(t, http.StatusForbidden, structs.ErrorCode(err))
				must.StrHasPrefix(t, "Permission denied", err.Error())
				if tok != "secret-n1" {
					must.StrContains(t, err.Error(), "node write")
				}
				must.Eq(t, index, srv.State().LatestIndex())
			}
			must.NoError(t, tc.call(writer.SecretID))
		})
	}
}

// A client registering again keeps the drain and eligibility the operator set.
func TestNode_ReregisterKeepsDrainAndEligibility(t *testing.T) {
	srv := testServer(t, nil)
	registerNode(t, srv, mock.Node("n1"), "")
	registerNode(t, srv, mock.Node("n2"), "")
	holdDrain(t, srv, "", "n1")
	_, err := drainNode(srv, "", "n1", &api.DrainSpec{Deadline: time.Hour}, false)
	must.NoError(t, err)
	_, err = setEligibility(srv, "", "n2", structs.NodeSchedulingIneligible)
	must.NoError(t, err)

	registerNode(t, srv, mock.Node("n1"), "secret-n1")
	registerNode(t, srv, mock.Node("n2"), "secret-n2")
	n1, err := srv.State().NodeByID(nil, "n1")
	must.NoError(t, err)
	must.True(t, n1.Drain)
	must.NotNil(t, n1.DrainStrategy)
	must.Eq(t, structs.NodeSchedulingIneligible, n1.SchedulingEligibility)
	must.Eq(t, api.DrainStatusDraining, n1.LastDrain.Status)
	n2, err := srv.State().NodeByID(nil, "n2")
	must.NoError(t, err)
	must.Eq(t, structs.NodeSchedulingIneligible, n2.SchedulingEligibility)
}

// Registration, drain and eligibility leave node events, at most MaxNodeEvents of them, newest
// last; a registration again keeps them.
func TestNode_Events(t *testing.T) {
	srv := testServer(t, nil)
	registerNode(t, srv, mock.Node("n1"), "")
	holdDrain(t, srv, "", "n1")
	messages := func() []string {
		node, err := srv.State().NodeByID(nil, "n1")
		must.NoError(t, err)
		var out []string
		for _, e := range node.Events {
			must.Positive(t, e.CreateIndex)
			must.False(t, e.Timestamp.IsZero())
			out = append(out, e.Message)
		}
		return out
	}
	must.Eq(t, []string{structs.NodeEventRegistered}, messages())

	_, err := setEligibility(srv, "", "n1", structs.NodeSchedulingIneligible)
	must.NoError(t, err)
	_, err = drainNode(srv, "", "n1", &api.DrainSpec{Deadline: time.Hour}, false)
	must.NoError(t, err)
	_, err = drainNode(srv, "", "n1", nil, true)
	must.NoError(t, err)
	registerNode(t, srv, mock.Node("n1"), "secret-n1")
	must.Eq(t, []string{structs.NodeEventRegistered, structs.NodeEventIneligible, structs.NodeEventDrainSet,
		structs.NodeEventDrainDisabled}, messages())

	for range 6 {
		_, err = setEligibility(srv, "", "n1", structs.NodeSchedulingIneligible)
		must.NoError(t, err)
		_, err = setEligibility(srv, "", "n1", structs.NodeSchedulingEligible)
		must.NoError(t, err)
	}
	got := messages()
	must.SliceLen(t, structs.MaxNodeEvents, got)
	must.Eq(t, structs.NodeEventEligible, got[len(got)-1])
}
