package nomad

import (
	"bufio"
	"context"
	"io"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/yamux"
	"github.com/nomadfork/nomad/structs"
)

// eventFrameTimeout bounds writing one frame of an event stream to a client agent.
const eventFrameTimeout = 30 * time.Second

// serveEventStream streams events to a client agent for a caller of its HTTP API, whose token
// the request carries: the subscription is opened and authorised exactly as for a stream
// asked of this server's HTTP API. It ends when the subscription ends, when the client closes
// the stream, or at shutdown.
func (cs *clientSession) serveEventStream(stream *yamux.Stream, r *bufio.Reader, body []byte) {
	enc := codec.NewEncoder(stream, structs.MsgpackHandle)
	send := func(f *structs.EventStreamFrame) bool {
		_ = stream.SetWriteDeadline(time.Now().Add(eventFrameTimeout))
		return enc.Encode(f) == nil
	}
	var args structs.EventStreamRequest
	if err := structs.Decode(body, &args); err != nil {
		send(&structs.EventStreamFrame{Code: 400, Error: structs.BadRequest("decoding %s arguments: %v", structs.EventStreamMethod, err).Error()})
		return
	}
	sub, expires, err := cs.srv.Endpoints.Event.SubscribeUntil(&args)
	if err != nil {
		send(&structs.EventStreamFrame{Code: structs.ErrorCode(err), Error: err.Error(), Kind: structs.ErrorKind(err)})
		return
	}
	defer sub.Unsubscribe()
	if !send(&structs.EventStreamFrame{Expires: expires}) {
		return
	}

	ctx, cancel := context.WithCancel(cs.srv.shutdownCtx)
	defer cancel()
	if expires != nil {
		var cancelExpiry context.CancelFunc
		ctx, cancelExpiry = context.WithDeadline(ctx, *expires)
		defer cancelExpiry()
	}
	// The client sends nothing after its request; its close (or the session's end) is the
	// end of the stream.
	_ = stream.SetReadDeadline(time.Time{})
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_, _ = io.Copy(io.Discard, r)
		cancel()
	}()
	defer func() {
		_ = stream.Close()
		<-closed
	}()
	for {
		line, err := sub.NextEncoded(ctx)
		if gap := sub.TakeGap(); gap != nil {
			if !send(&structs.EventStreamFrame{Gap: gap}) {
				return
			}
		}
		if err != nil {
			if ctx.Err() == nil || cs.srv.shutdownCtx.Err() != nil {
				send(&structs.EventStreamFrame{Error: err.Error()})
			}
			return
		}
		if !send(&structs.EventStreamFrame{Line: line}) {
			return
		}
	}
}
