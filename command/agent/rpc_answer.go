package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// Most handlers parse a request, make one RPC and answer with part of its reply; read and
// found do the parts every read shares (the call, the blocking-query headers, the 404 of an
// empty answer), so a handler states only its arguments and what it answers.

// queryReply is the answer of a read RPC: a struct embedding structs.QueryMeta.
type queryReply[R any] interface {
	*R
	GetQueryMeta() *structs.QueryMeta
}

// read makes the read RPC method, sets the blocking-query headers from its reply and answers
// with what answer makes of the reply.
func read[R any, PR queryReply[R]](s *HTTPServer, w http.ResponseWriter, method string, args any, answer func(reply *R) (any, error)) (any, error) {
	reply := PR(new(R))
	if err := s.rpc.RPC(method, args, reply); err != nil {
		return nil, err
	}
	setMeta(w, reply.GetQueryMeta())
	return answer((*R)(reply))
}

// found answers v, or notFound when the read found nothing.
func found[T any](v *T, notFound error) (any, error) {
	if v == nil {
		return nil, notFound
	}
	return v, nil
}
