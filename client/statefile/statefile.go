// Package statefile owns the layout of a client's state file (<state_dir>/state.db, a bbolt
// database) and reads it for tools that run while the agent is stopped, such as
// "nomad operator client-state". It imports nothing of ours, so the CLI can read a data
// directory without linking the client.
package statefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// FileName is the client's state file under its state directory.
const FileName = "state.db"

// Buckets of the state file: allocations/<alloc ID>/ holds the allocation as last received
// ("alloc"), and one key per task in "task-states" and "handles".
var (
	BucketAllocs     = []byte("allocations")
	KeyAlloc         = []byte("alloc")
	BucketTaskStates = []byte("task-states")
	BucketHandles    = []byte("handles")
)

// ErrInUse is returned when a running agent holds the state file.
var ErrInUse = errors.New("the state file is in use by a running agent: stop the agent first")

// Dump is the whole of a state file, its values as stored.
type Dump struct {
	Allocations map[string]*AllocDump
}

// AllocDump is one allocation and its tasks.
type AllocDump struct {
	Alloc json.RawMessage
	Tasks map[string]*TaskDump
}

// TaskDump is one task: LocalState is the handle the client uses to find the task again
// after a restart, RemoteState the task state it reports to the servers.
type TaskDump struct {
	LocalState  json.RawMessage `json:",omitempty"`
	RemoteState json.RawMessage `json:",omitempty"`
}

// Read opens the state file at path read-only and returns everything it holds. A file that
// does not exist is an error, never created.
func Read(path string) (dump *Dump, err error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%s: %w", path, ErrInUse)
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// A file damaged past its checksums can make bbolt panic while reading.
	defer func() {
		if r := recover(); r != nil {
			dump, err = nil, fmt.Errorf("reading %s: %v", path, r)
		}
	}()
	dump = &Dump{Allocations: map[string]*AllocDump{}}
	err = db.View(func(tx *bolt.Tx) error {
		allocs := tx.Bucket(BucketAllocs)
		if allocs == nil {
			return nil
		}
		return allocs.ForEach(func(id, _ []byte) error {
			b := allocs.Bucket(id)
			if b == nil {
				return fmt.Errorf("allocation %q: not a bucket", id)
			}
			a := &AllocDump{Alloc: copyRaw(b.Get(KeyAlloc)), Tasks: map[string]*TaskDump{}}
			task := func(name []byte) *TaskDump {
				t := a.Tasks[string(name)]
				if t == nil {
					t = &TaskDump{}
					a.Tasks[string(name)] = t
				}
				return t
			}
			if tb := b.Bucket(BucketTaskStates); tb != nil {
				if err := tb.ForEach(func(k, v []byte) error { task(k).RemoteState = copyRaw(v); return nil }); err != nil {
					return err
				}
			}
			if hb := b.Bucket(BucketHandles); hb != nil {
				if err := hb.ForEach(func(k, v []byte) error { task(k).LocalState = copyRaw(v); return nil }); err != nil {
					return err
				}
			}
			dump.Allocations[string(id)] = a
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return dump, nil
}

// PathInDataDir is where an agent with data directory dir and no client state_dir of its
// own keeps the state file.
func PathInDataDir(dir string) string {
	return filepath.Join(dir, "client", FileName)
}

// copyRaw copies a value out of a bbolt page, which is only valid inside the transaction;
// a value that is not JSON is kept as a JSON string so the dump stays printable.
func copyRaw(v []byte) json.RawMessage {
	if v == nil {
		return nil
	}
	if !json.Valid(v) {
		s, _ := json.Marshal(string(v))
		return s
	}
	return append(json.RawMessage(nil), v...)
}
