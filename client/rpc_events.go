package client

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/yamux"
	"github.com/nomadfork/nomad/structs"
)

// maxEventStreams bounds the event streams the agent's HTTP API relays at once; with
// maxAPICalls it stays below what a server accepts on one connection.
const maxEventStreams = 4

// EventStream is a subscription to the servers' events relayed over the client's session,
// for the agent's HTTP API; it reads as the server's own subscription does.
type EventStream struct {
	stream  *yamux.Stream
	frames  chan *structs.EventStreamFrame
	done    chan struct{}
	readErr error
	release func()

	mu  sync.Mutex
	gap *structs.EventGap

	closeOnce sync.Once
	wg        sync.WaitGroup
}

// EventStream opens a subscription with the caller's request (its token included), which the
// server authorises as it would a stream asked of its own HTTP API. expires is when the
// caller's token expires (nil: never).
func (r *RPCServers) EventStream(args *structs.EventStreamRequest) (*EventStream, *time.Time, error) {
	select {
	case r.eventSlots <- struct{}{}:
	default:
		return nil, nil, structs.NewErrCode(http.StatusTooManyRequests, "this agent relays %d event streams already; close one or send the request to a server agent", maxEventStreams)
	}
	release := func() { <-r.eventSlots }
	sess, err := r.session()
	if err != nil {
		release()
		return nil, nil, err
	}
	stream, err := sess.OpenStream()
	if err != nil {
		release()
		r.drop(sess)
		return nil, nil, err
	}
	fail := func(err error) (*EventStream, *time.Time, error) {
		_ = stream.Close()
		release()
		return nil, nil, err
	}
	_ = stream.SetDeadline(time.Now().Add(rpcCallTimeout))
	buf, err := structs.Encode(0, args)
	if err != nil {
		return fail(err)
	}
	if err := codec.NewEncoder(stream, structs.MsgpackHandle).Encode(&rpcRequest{Method: structs.EventStreamMethod, Body: buf[1:]}); err != nil {
		return fail(err)
	}
	dec := codec.NewDecoder(bufio.NewReader(stream), structs.MsgpackHandle)
	var first structs.EventStreamFrame
	if err := dec.Decode(&first); err != nil {
		return fail(err)
	}
	if first.Error != "" {
		return fail(structs.WireError(first.Code, first.Kind, first.Error))
	}
	_ = stream.SetDeadline(time.Time{})
	es := &EventStream{stream: stream, frames: make(chan *structs.EventStreamFrame), done: make(chan struct{}), release: release}
	es.wg.Add(1)
	go es.read(dec)
	return es, first.Expires, nil
}

// read passes frames on until the stream ends or Unsubscribe.
func (e *EventStream) read(dec *codec.Decoder) {
	defer e.wg.Done()
	defer close(e.frames)
	for {
		f := new(structs.EventStreamFrame)
		if err := dec.Decode(f); err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the server closed the event stream")
			}
			e.readErr = err
			return
		}
		select {
		case e.frames <- f:
		case <-e.done:
			return
		}
	}
}

// NextEncoded is the next batch, encoded as the HTTP stream writes it; it waits until ctx
// ends. A gap the server announced before the batch is held for TakeGap.
func (e *EventStream) NextEncoded(ctx context.Context) ([]byte, error) {
	for {
		select {
		case f, ok := <-e.frames:
			if !ok {
				return nil, e.readErr
			}
			if f.Gap != nil {
				e.mu.Lock()
				e.gap = f.Gap
				e.mu.Unlock()
				continue
			}
			if f.Error != "" {
				return nil, errors.New(f.Error)
			}
			return f.Line, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// TakeGap returns the gap announced before the last batch, once.
func (e *EventStream) TakeGap() *structs.EventGap {
	e.mu.Lock()
	defer e.mu.Unlock()
	g := e.gap
	e.gap = nil
	return g
}

// Unsubscribe closes the stream, which ends the server's subscription, and waits for the
// reader.
func (e *EventStream) Unsubscribe() {
	e.closeOnce.Do(func() {
		close(e.done)
		_ = e.stream.Close()
		// The reader must not wait on a server that no longer answers.
		_ = e.stream.SetReadDeadline(time.Now())
		e.wg.Wait()
		e.release()
	})
}
