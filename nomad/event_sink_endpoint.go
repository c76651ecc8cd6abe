package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/nomad/eventsink"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// EventSink is the endpoint of event sinks (ours): receivers the leader delivers selected
// events to, signed, at least once (nomad/eventsink). Every call needs a management token.
type EventSink struct {
	srv *Server
}

// eventSinkUpsert registers or replaces a sink. The answer never carries the secret.
var eventSinkUpsert = write("EventSink.Upsert", spec[structs.EventSinkUpsertRequest, structs.GenericResponse]{
	Authorize: sinkManagement[structs.EventSinkUpsertRequest]("register event sinks"),
	Validate: func(req *structs.EventSinkUpsertRequest) error {
		if err := req.Sink.Validate(); err != nil {
			return err
		}
		return eventsink.ValidateFilter(req.Sink.Filter)
	},
	Serve: func(c *rpcCall, req *structs.EventSinkUpsertRequest, reply *structs.GenericResponse) error {
		// The cursor and delivery status are the leader's to record, never the caller's.
		sink := *req.Sink
		sink.LatestIndex, sink.LastError, sink.LastErrorTime, sink.LastDeliveryTime = 0, "", 0, 0
		sink.CreateIndex, sink.ModifyIndex = 0, 0
		index, err := c.srv.raftApply(structs.EventSinkUpsertRequestType, &structs.EventSinkUpsertRequest{Sink: &sink, WriteRequest: req.WriteRequest})
		if err != nil {
			return err
		}
		reply.Index = index
		return nil
	},
})

// eventSinkDelete removes a sink; an unknown ID is a 404.
var eventSinkDelete = write("EventSink.Delete", spec[structs.EventSinkDeleteRequest, structs.GenericResponse]{
	Authorize: sinkManagement[structs.EventSinkDeleteRequest]("deregister event sinks"),
	Validate: func(req *structs.EventSinkDeleteRequest) error {
		if req.ID == "" {
			return structs.BadRequest("ID: missing")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.EventSinkDeleteRequest, reply *structs.GenericResponse) error {
		sink, err := c.srv.State().EventSinkByID(nil, req.ID)
		if err != nil {
			return err
		}
		if sink == nil {
			return structs.NewErrCode(404, "event sink not found")
		}
		index, err := c.srv.raftApply(structs.EventSinkDeleteRequestType, req)
		if err != nil {
			return err
		}
		reply.Index = index
		return nil
	},
})

// eventSinkList lists the sinks, without their secrets.
var eventSinkList = read("EventSink.List", spec[structs.EventSinkListRequest, structs.EventSinkListResponse]{
	Authorize: sinkManagement[structs.EventSinkListRequest]("list event sinks"),
	Serve: func(c *rpcCall, req *structs.EventSinkListRequest, reply *structs.EventSinkListResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			sinks, err := store.EventSinks(ws)
			if err != nil {
				return 0, err
			}
			reply.Sinks = views(sinks, (*structs.EventSink).Redacted)
			return store.Index("event_sinks"), nil
		})
	},
})

// eventSinkGet reads one sink with its delivery status, without its secret.
var eventSinkGet = read("EventSink.Get", spec[structs.EventSinkSpecificRequest, structs.EventSinkResponse]{
	Authorize: sinkManagement[structs.EventSinkSpecificRequest]("read event sinks"),
	Serve: func(c *rpcCall, req *structs.EventSinkSpecificRequest, reply *structs.EventSinkResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			sink, err := store.EventSinkByID(ws, req.ID)
			if err != nil {
				return 0, err
			}
			if sink == nil {
				return 0, structs.NewErrCode(404, "event sink not found")
			}
			reply.Sink = sink.Redacted()
			return store.Index("event_sinks"), nil
		})
	},
})

// Upsert registers or replaces an event sink.
func (e *EventSink) Upsert(args *structs.EventSinkUpsertRequest, reply *structs.GenericResponse) error {
	return eventSinkUpsert.Call(e.srv, args, reply)
}

// Delete removes an event sink.
func (e *EventSink) Delete(args *structs.EventSinkDeleteRequest, reply *structs.GenericResponse) error {
	return eventSinkDelete.Call(e.srv, args, reply)
}

// List lists the event sinks without their secrets.
func (e *EventSink) List(args *structs.EventSinkListRequest, reply *structs.EventSinkListResponse) error {
	return eventSinkList.Call(e.srv, args, reply)
}

// Get reads one event sink without its secret.
func (e *EventSink) Get(args *structs.EventSinkSpecificRequest, reply *structs.EventSinkResponse) error {
	return eventSinkGet.Call(e.srv, args, reply)
}
