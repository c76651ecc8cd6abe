package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/statefile"
	"github.com/nomadfork/nomad/structs"
	bolt "go.etcd.io/bbolt"
)

// The state file's layout is statefile's, which the offline tools read too.
const stateFileName = statefile.FileName

var (
	bucketAllocs     = statefile.BucketAllocs
	keyAlloc         = statefile.KeyAlloc
	bucketTaskStates = statefile.BucketTaskStates
	bucketHandles    = statefile.BucketHandles
)

// clientState keeps what a restarted client needs to find its tasks again: every write is
// one bbolt transaction, fsync'd before it returns, so that what was written before a task
// was reported running survives a kill -9 of the agent. A nil *clientState keeps nothing
// (a client without a state directory).
type clientState struct {
	db   *bolt.DB
	path string
}

// restoredAlloc is one allocation as the state file had it.
type restoredAlloc struct {
	alloc   *structs.Allocation
	states  map[string]*structs.TaskState
	handles map[string]*drivers.HandleState
}

// openClientState opens (or creates) the state file in dir and reads the allocations it
// holds. A file that cannot be read is moved aside with one error logged, and the client
// starts with none: a corrupt file must not keep the node down. A file another agent holds
// open is an error, not corruption.
func openClientState(dir string, logger hclog.Logger) (*clientState, []*restoredAlloc, error) {
	if dir == "" {
		return nil, nil, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("client: creating state directory: %w", err)
	}
	path := filepath.Join(dir, stateFileName)
	s, allocs, err := loadClientState(path)
	if err == nil {
		return s, allocs, nil
	}
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, nil, fmt.Errorf("client: state file %s is in use by another process", path)
	}
	aside := path + ".corrupt"
	logger.Error("client state file is unreadable: moved aside, starting with no allocations",
		"file", path, "moved_to", aside, "error", err)
	if err := os.Rename(path, aside); err != nil {
		return nil, nil, fmt.Errorf("client: moving unreadable state file %s aside: %w", path, err)
	}
	s, allocs, err = loadClientState(path)
	if err != nil {
		return nil, nil, fmt.Errorf("client: creating state file %s: %w", path, err)
	}
	return s, allocs, nil
}

// loadClientState opens the file and reads it whole. A file damaged past its checksums can
// make bbolt panic while reading: that is reported as an error too.
func loadClientState(path string) (s *clientState, allocs []*restoredAlloc, err error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading state file: %v", r)
		}
		if err != nil {
			_ = db.Close()
			s, allocs = nil, nil
		}
	}()
	s = &clientState{db: db, path: path}
	if err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketAllocs)
		return err
	}); err != nil {
		return nil, nil, err
	}
	allocs, err = s.load()
	return s, allocs, err
}

func (s *clientState) load() ([]*restoredAlloc, error) {
	var out []*restoredAlloc
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAllocs).ForEach(func(id, v []byte) error {
			b := tx.Bucket(bucketAllocs).Bucket(id)
			if b == nil {
				return fmt.Errorf("allocation %q: not a bucket", id)
			}
			ra := &restoredAlloc{states: map[string]*structs.TaskState{}, handles: map[string]*drivers.HandleState{}}
			if err := json.Unmarshal(b.Get(keyAlloc), &ra.alloc); err != nil || ra.alloc == nil || ra.alloc.ID != string(id) {
				return fmt.Errorf("allocation %q: unreadable: %v", id, err)
			}
			if err := readEach(b.Bucket(bucketTaskStates), ra.states); err != nil {
				return fmt.Errorf("allocation %q task states: %w", id, err)
			}
			if err := readEach(b.Bucket(bucketHandles), ra.handles); err != nil {
				return fmt.Errorf("allocation %q handles: %w", id, err)
			}
			out = append(out, ra)
			return nil
		})
	})
	return out, err
}

func readEach[T any](b *bolt.Bucket, into map[string]*T) error {
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		var x T
		if err := json.Unmarshal(v, &x); err != nil {
			return fmt.Errorf("%q: %w", k, err)
		}
		into[string(k)] = &x
		return nil
	})
}

// putAlloc stores the allocation as last received from the servers.
func (s *clientState) putAlloc(a *structs.Allocation) error {
	if s == nil {
		return nil
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketAllocs).CreateBucketIfNotExists([]byte(a.ID))
		if err != nil {
			return err
		}
		return b.Put(keyAlloc, raw)
	})
}

// putTask stores a task's state or handle (nil deletes the handle). An allocation that was
// deleted is not brought back by a late write of one of its tasks.
func (s *clientState) putTask(allocID, bucket, task string, v any) error {
	if s == nil {
		return nil
	}
	var raw []byte
	if v != nil {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return err
		}
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		ab := tx.Bucket(bucketAllocs).Bucket([]byte(allocID))
		if ab == nil {
			return nil
		}
		b, err := ab.CreateBucketIfNotExists([]byte(bucket))
		if err != nil {
			return err
		}
		if raw == nil {
			return b.Delete([]byte(task))
		}
		return b.Put([]byte(task), raw)
	})
}

func (s *clientState) putTaskState(allocID, task string, ts *structs.TaskState) error {
	return s.putTask(allocID, string(bucketTaskStates), task, ts)
}

// putHandle stores how to find a started task again; nil forgets it (the task ended).
func (s *clientState) putHandle(allocID, task string, h *drivers.HandleState) error {
	if h == nil {
		return s.putTask(allocID, string(bucketHandles), task, nil)
	}
	return s.putTask(allocID, string(bucketHandles), task, h)
}

// deleteAlloc forgets an allocation the client is done with.
func (s *clientState) deleteAlloc(id string) error {
	if s == nil {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketAllocs).DeleteBucket([]byte(id))
		if errors.Is(err, bolt.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}

func (s *clientState) close() error {
	if s == nil {
		return nil
	}
	return s.db.Close()
}
