package jepsen

import (
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
)

// LifeKind is what an operation of a lifecycle workload (ACL tokens, purges) does to one
// object.
type LifeKind string

const (
	// Create makes the object: an ACL token created, a job registered.
	Create LifeKind = "create"
	// Remove ends it for good: an ACL token deleted, a job purged.
	Remove LifeKind = "remove"
	// ReadObject is a default read of the object itself (a token by accessor, a job by ID):
	// Found says whether it answered 200 or 404.
	ReadObject LifeKind = "read"
	// ReadRecord is a default read of what the removal left behind (the job's purge history
	// record): Found says whether the record was listed.
	ReadRecord LifeKind = "read-record"
)

// LifeOp is one recorded operation of a lifecycle workload. Key names the object for the whole
// run (the token's Name, the job's ID: each is created at most once); Ref is what the API
// calls it when that differs (a token's AccessorID), kept for the report. Outcome is as for the
// register: an Unknown create or remove may have happened, a Fail one did not, a read that did
// not answer is left out.
type LifeOp struct {
	Client  int      `json:"client"`
	Server  string   `json:"server"`
	Key     string   `json:"key"`
	Ref     string   `json:"ref,omitempty"`
	Kind    LifeKind `json:"kind"`
	Found   bool     `json:"found,omitempty"`
	Outcome Outcome  `json:"outcome"`
	Call    int64    `json:"call"`
	Return  int64    `json:"return"`
	Err     string   `json:"err,omitempty"`
}

// The states of one object: never created, created, removed. There is no way back from
// removed: a token deleted or a job purged must never be read again, and (for purges) its
// record, once there, must stay.
const (
	lifeAbsent  = "absent"
	lifeLive    = "live"
	lifeRemoved = "removed"
)

// lifecycleModel is one object per Key, checked on its own (Partition): created once, removed
// at most once. A read of the object must find it exactly while it is live; a read of its
// record must find it exactly once it is removed.
func lifecycleModel(object, record string) porcupine.Model {
	return porcupine.Model{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[string][]porcupine.Operation{}
			var keys []string
			for _, op := range history {
				k := op.Input.(LifeOp).Key
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], op)
			}
			out := make([][]porcupine.Operation, 0, len(keys))
			for _, k := range keys {
				out = append(out, byKey[k])
			}
			return out
		},
		Init: func() interface{} { return lifeAbsent },
		Step: func(state, input, _ interface{}) (bool, interface{}) {
			s := state.(string)
			op := input.(LifeOp)
			switch op.Kind {
			case Create:
				if op.Outcome == OK {
					return s == lifeAbsent, lifeLive
				}
				// Unknown: this is the order where it happened (porcupine also tries never).
				if s == lifeAbsent {
					return true, lifeLive
				}
				return true, s
			case Remove:
				if op.Outcome == OK {
					return s == lifeLive, lifeRemoved
				}
				if s == lifeLive {
					return true, lifeRemoved
				}
				return true, s
			case ReadObject:
				return op.Found == (s == lifeLive), s
			case ReadRecord:
				return op.Found == (s == lifeRemoved), s
			}
			return false, s
		},
		DescribeOperation: func(input, _ interface{}) string {
			op := input.(LifeOp)
			switch op.Kind {
			case ReadObject:
				return fmt.Sprintf("%s %s read → found %v", object, op.Key, op.Found)
			case ReadRecord:
				return fmt.Sprintf("%s %s %s → found %v", object, op.Key, record, op.Found)
			}
			return fmt.Sprintf("%s %s %s: %s", object, op.Key, op.Kind, op.Outcome)
		},
		DescribeState: func(state interface{}) string { return state.(string) },
	}
}

// TokenModel checks the ACL-token workload: a token acknowledged as created is read by its
// accessor through any server until it is deleted, and never after. Tokens have no record.
var TokenModel = lifecycleModel("token", "")

// PurgeModel checks the purge workload: a registered job is read until its purge, never after,
// and its purge history record is listed from the purge on, for good.
var PurgeModel = lifecycleModel("job", "purge record")

// LifeOperations turns a lifecycle history into porcupine's, as Operations does for registers:
// a read that did not answer and a refused create or remove are left out, an unknown create or
// remove gets an open end.
func LifeOperations(history []LifeOp) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(history))
	for _, h := range history {
		if h.Outcome == Fail || h.Outcome == Refused || (h.Outcome != OK && (h.Kind == ReadObject || h.Kind == ReadRecord)) {
			continue
		}
		ret := h.Return
		if h.Outcome == Unknown {
			ret = math.MaxInt64
		}
		ops = append(ops, porcupine.Operation{ClientId: h.Client, Input: h, Call: h.Call, Return: ret, Metadata: h.Server})
	}
	return ops
}

// CheckLife checks a lifecycle history under model; nil only for a linearizable one.
func CheckLife(model porcupine.Model, history []LifeOp, timeout time.Duration) (porcupine.LinearizationInfo, error) {
	res, info := porcupine.CheckOperationsVerbose(model, LifeOperations(history), timeout)
	switch res {
	case porcupine.Ok:
		return info, nil
	case porcupine.Illegal:
		return info, ErrNotLinearizable
	default:
		return info, ErrCheckTimedOut
	}
}

// FailingObjects names the keys whose history fails on its own, so a failure points at the
// object to look at in the visualisation.
func FailingObjects(model porcupine.Model, history []LifeOp, timeout time.Duration) []string {
	byKey := map[string][]LifeOp{}
	var keys []string
	for _, op := range history {
		if _, ok := byKey[op.Key]; !ok {
			keys = append(keys, op.Key)
		}
		byKey[op.Key] = append(byKey[op.Key], op)
	}
	var bad []string
	for _, k := range keys {
		if porcupine.CheckOperationsTimeout(model, LifeOperations(byKey[k]), timeout) != porcupine.Ok {
			bad = append(bad, k)
		}
	}
	return bad
}
