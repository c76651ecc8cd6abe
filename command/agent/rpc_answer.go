package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// Most handlers parse a request, make one RPC and answer with part of its reply. read, write
// and found do the parts every such handler shares (the call, the headers taken from the
// reply, the 404 of an empty answer), so a handler states only its arguments and what it
// answers.

// queryReply is the answer of a read RPC: a struct embedding structs.QueryMeta.
type queryReply[R any] interface {
	*R
	GetQueryMeta() *structs.QueryMeta
}

// writeReply is the answer of a write RPC: a struct embedding structs.WriteMeta.
type writeReply[R any] interface {
	*R
	GetWriteMeta() *structs.WriteMeta
}

// read makes the read RPC method, sets the blocking-query headers from its reply and answers
// with what answer makes of the reply.
func read[R any, PR queryReply[R]](s *HTTPServer, w http.ResponseWriter, method string, args any, answer func(reply *R) (any, error)) (any, error) {
	reply := PR(new(R))
	return answerRPC(s, method, args, reply, func() { setMeta(w, reply.GetQueryMeta()) }, answer)
}

// write makes the write RPC method, sets the index header to the index it was committed at
// and answers with what answer makes of the reply.
func write[R any, PR writeReply[R]](s *HTTPServer, w http.ResponseWriter, method string, args any, answer func(reply *R) (any, error)) (any, error) {
	reply := PR(new(R))
	return answerRPC(s, method, args, reply, func() { setIndex(w, reply.GetWriteMeta().Index) }, answer)
}

// writeQueryIndexed is write for the job writes, whose replies carry their commit index in
// an embedded structs.QueryMeta as upstream's do; only the index header is set, as there.
func writeQueryIndexed[R any, PR queryReply[R]](s *HTTPServer, w http.ResponseWriter, method string, args any, answer func(reply *R) (any, error)) (any, error) {
	reply := PR(new(R))
	return answerRPC(s, method, args, reply, func() { setIndex(w, reply.GetQueryMeta().Index) }, answer)
}

// answerRPC makes the RPC into reply and, when it succeeded, sets the headers and answers.
func answerRPC[R any](s *HTTPServer, method string, args any, reply *R, setHeaders func(), answer func(reply *R) (any, error)) (any, error) {
	if err := s.rpc.RPC(method, args, reply); err != nil {
		return nil, err
	}
	setHeaders()
	return answer(reply)
}

// wholeReply answers with the reply itself.
func wholeReply[R any](reply *R) (any, error) { return reply, nil }

// found answers v, or notFound when the read found nothing.
func found[T any](v *T, notFound error) (any, error) {
	if v == nil {
		return nil, notFound
	}
	return v, nil
}

// keyFromPath reconciles the key a write names in its path (param) with the one in its body:
// a body without one takes the path's, a body naming another is refused with mismatch. A
// route without the parameter leaves the body's key as it is.
func keyFromPath(r *http.Request, param string, key *string, mismatch error) error {
	path := r.PathValue(param)
	if path == "" {
		return nil
	}
	if *key == "" {
		*key = path
	}
	if *key != path {
		return mismatch
	}
	return nil
}

// decodeForPath decodes a write's body (optional: it may be absent) whose own ID, at bodyID,
// may repeat the ID of the path but not name another.
func decodeForPath(r *http.Request, body any, optional bool, pathID string, bodyID *string, mismatch error) error {
	if err := bodyDecoder(optional)(r, body); err != nil {
		return err
	}
	if *bodyID != "" && *bodyID != pathID {
		return mismatch
	}
	return nil
}

// bodyDecoder is decodeOptionalBody for a body that may be absent, else decodeBody.
func bodyDecoder(optional bool) func(r *http.Request, out any) error {
	if optional {
		return decodeOptionalBody
	}
	return decodeBody
}
