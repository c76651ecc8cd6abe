package client

import (
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadfork/nomad/structs"
	"github.com/nomadfork/nomad/structs/slotconn"
)

// maxForwards bounds the requests the agent's HTTP API relays to other nodes at once; with
// maxAPICalls and maxEventStreams it stays below what a server accepts on one connection
// (nomad's maxClientCalls), so the node's own calls keep their room.
const maxForwards = 12

// Forward opens a stream on which the agent's HTTP API sends one HTTP request for another
// node's allocation or node, to be relayed by the server (structs.ClientForwardMethod). The
// stream carries the node's secret, so that only a registered node's agent relays, and the
// caller's token, on which the server decides as its own HTTP API would. Write the request
// on the returned connection and read the answer in HTTP; Close gives its slot back.
func (r *RPCServers) Forward(token string) (net.Conn, error) {
	select {
	case r.forwardSlots <- struct{}{}:
	default:
		return nil, structs.NewErrCode(http.StatusTooManyRequests, "this agent relays %d requests to other nodes already (the limit is %d); retry, or send the request to a server agent", maxForwards, maxForwards)
	}
	release := func() { <-r.forwardSlots }
	r.mu.Lock()
	nodeID, secret := r.nodeID, r.secret
	r.mu.Unlock()
	if nodeID == "" {
		release()
		return nil, structs.NewErrCode(http.StatusServiceUnavailable, "this agent's client has not registered with a server yet")
	}
	sess, err := r.session()
	if err != nil {
		release()
		return nil, err
	}
	stream, err := sess.OpenStream()
	if err != nil {
		release()
		r.drop(sess)
		return nil, err
	}
	buf, err := structs.Encode(0, &structs.ClientForwardRequest{NodeID: nodeID, SecretID: secret, AuthToken: token})
	if err == nil {
		_ = stream.SetWriteDeadline(time.Now().Add(rpcCallTimeout))
		err = codec.NewEncoder(stream, structs.MsgpackHandle).Encode(&rpcRequest{Method: structs.ClientForwardMethod, Body: buf[1:]})
		_ = stream.SetWriteDeadline(time.Time{})
	}
	if err != nil {
		_ = stream.Close()
		release()
		return nil, errors.Join(errors.New("client: opening a relay"), err)
	}
	return slotconn.New(stream, release), nil
}
