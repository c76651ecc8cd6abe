package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// eventSinkView is a sink as the API shows it: the secret is never part of it.
type eventSinkView struct {
	ID               string
	Type             string
	Address          string
	Topics           map[structs.Topic][]string
	Filter           string
	LatestIndex      uint64
	LastError        string
	LastErrorTime    int64
	LastDeliveryTime int64
	CreateIndex      uint64
	ModifyIndex      uint64
}

func viewOfSink(s *structs.EventSink) *eventSinkView {
	return &eventSinkView{ID: s.ID, Type: s.Type, Address: s.Address, Topics: s.Topics, Filter: s.Filter,
		LatestIndex: s.LatestIndex, LastError: s.LastError, LastErrorTime: s.LastErrorTime,
		LastDeliveryTime: s.LastDeliveryTime, CreateIndex: s.CreateIndex, ModifyIndex: s.ModifyIndex}
}

// eventSinkBody is what PUT /v1/event/sink/:id reads; the delivery status is the leader's.
type eventSinkBody struct {
	ID      string
	Type    string
	Address string
	Topics  map[structs.Topic][]string
	Filter  string
	Secret  string
}

func (s *HTTPServer) eventSinkWrite(w http.ResponseWriter, r *http.Request) (any, error) {
	var body eventSinkBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if err := keyFromPath(r, "id", &body.ID, structs.BadRequest("ID: %q does not match the ID in the path, %q", body.ID, r.PathValue("id"))); err != nil {
		return nil, err
	}
	args := structs.EventSinkUpsertRequest{Sink: &structs.EventSink{ID: body.ID, Type: body.Type, Address: body.Address,
		Topics: body.Topics, Filter: body.Filter, Secret: body.Secret}, WriteRequest: writeRequest(r)}
	return write(s, w, "EventSink.Upsert", &args, func(reply *structs.GenericResponse) (any, error) {
		return reply.GetWriteMeta(), nil
	})
}

func (s *HTTPServer) eventSinkDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EventSinkDeleteRequest{ID: r.PathValue("id"), WriteRequest: writeRequest(r)}
	return write(s, w, "EventSink.Delete", &args, func(reply *structs.GenericResponse) (any, error) {
		return reply.GetWriteMeta(), nil
	})
}

func (s *HTTPServer) eventSinkRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EventSinkSpecificRequest{ID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "EventSink.Get", &args, func(reply *structs.EventSinkResponse) (any, error) {
		return viewOfSink(reply.Sink), nil
	})
}

func (s *HTTPServer) eventSinkList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EventSinkListRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "EventSink.List", &args, func(reply *structs.EventSinkListResponse) (any, error) {
		out := make([]*eventSinkView, 0, len(reply.Sinks))
		for _, sink := range reply.Sinks {
			out = append(out, viewOfSink(sink))
		}
		return out, nil
	})
}
