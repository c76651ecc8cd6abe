package structs

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// MsgpackHandle encodes Raft log entries and snapshots. Free-form maps (task config, meta)
// decode as map[string]any so they marshal to JSON unchanged.
var MsgpackHandle = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString = true
	h.MapType = reflect.TypeOf(map[string]any(nil))
	return h
}()

// Encode builds a Raft log entry: the message type byte, then the msgpack request.
func Encode(t MessageType, msg any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(uint8(t))
	if err := codec.NewEncoder(&buf, MsgpackHandle).Encode(msg); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", t, err)
	}
	return buf.Bytes(), nil
}

// Decode reads a msgpack body into out.
func Decode(buf []byte, out any) error {
	return codec.NewDecoder(bytes.NewReader(buf), MsgpackHandle).Decode(out)
}
