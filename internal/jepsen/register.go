// Package jepsen holds the models and the checker of the Jepsen-style suite (e2e/jepsen_test.go):
// a history of operations recorded by clients against a real cluster under faults is checked
// for linearizability with porcupine. The package has no cluster code, so its models are
// unit-tested with small hand-made histories.
package jepsen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/anishathalye/porcupine"
)

// OpKind is what a register operation does.
type OpKind string

const (
	// Read is a default (not stale) read of the variable: its value, "" when it does not exist.
	Read OpKind = "read"
	// CAS is a write with a check index: it replaces Old with New only if the variable still
	// holds Old. On the wire the check is the ModifyIndex read along with Old; every write
	// stores a value never written before and there are no deletes, so an index names exactly
	// one value and "index unchanged" is "value unchanged".
	CAS OpKind = "cas"
)

// Outcome is how an operation ended.
type Outcome string

const (
	// OK: the read answered, or the write was acknowledged.
	OK Outcome = "ok"
	// Fail: the write was refused by its check (409): it did not happen.
	Fail Outcome = "fail"
	// Refused: the server refused the write before storing it (507, a full disk; or 500 "Not
	// ready to serve consistent reads", a new leader still catching up): it did not
	// happen, and unlike Fail it says nothing about the value, since no check was made. Taken
	// as a Fail, a refused write whose check would have passed was a false "the value had
	// changed", which made correct histories fail (seed 1796529656834985789).
	Refused Outcome = "refused"
	// Unknown: the write timed out, lost its connection or answered "write outcome unknown":
	// it may have happened, at any moment after its call, or never.
	Unknown Outcome = "unknown"
)

// RegisterInput is one operation on one key.
type RegisterInput struct {
	Key  string `json:"key"`
	Kind OpKind `json:"kind"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// RegisterOutput is its result; Value is what a read saw.
type RegisterOutput struct {
	Outcome Outcome `json:"outcome"`
	Value   string  `json:"value,omitempty"`
	// Index is the ModifyIndex a read saw (0 when the variable does not exist); only the
	// stale-read check (CheckStale) uses it.
	Index uint64 `json:"index,omitempty"`
}

// Op is one recorded operation: who did it, through which server, when (nanoseconds since
// the run began) and what came back. An operation whose outcome is Unknown has no meaningful
// return time: Operations gives it an open end.
type Op struct {
	Client int            `json:"client"`
	Server string         `json:"server"`
	Input  RegisterInput  `json:"input"`
	Output RegisterOutput `json:"output"`
	Call   int64          `json:"call"`
	Return int64          `json:"return"`
	// Err is the error text of a failed or unknown operation, kept for the report.
	Err string `json:"err,omitempty"`
}

// RegisterModel is a map of independent registers, one per key, each starting absent ("").
// Porcupine checks each key on its own (Partition), which keeps the search small.
var RegisterModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(RegisterInput).Key
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
	Init: func() interface{} { return "" },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s := state.(string)
		in := input.(RegisterInput)
		out := output.(RegisterOutput)
		switch in.Kind {
		case Read:
			return out.Value == s, s
		case CAS:
			switch out.Outcome {
			case OK:
				return s == in.Old, in.New
			case Fail:
				return s != in.Old, s
			default:
				// It happened here (the check decides whether it changed anything); porcupine
				// also tries the order where it happens after everything else, i.e. never.
				if s == in.Old {
					return true, in.New
				}
				return true, s
			}
		}
		return false, s
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(RegisterInput)
		out := output.(RegisterOutput)
		if in.Kind == Read {
			return fmt.Sprintf("%s read → %q", in.Key, out.Value)
		}
		return fmt.Sprintf("%s cas %q→%q: %s", in.Key, in.Old, in.New, out.Outcome)
	},
	DescribeState: func(state interface{}) string { return fmt.Sprintf("%q", state) },
}

// Operations turns the recorded history into porcupine's. A read that did not answer tells
// nothing and a write refused before it was stored did nothing, so both are left out; a write
// refused by its check stays (it says the value had changed); an unknown write keeps its
// call and gets an open end, so it may take effect at any later moment or never.
func Operations(history []Op) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(history))
	for _, h := range history {
		if (h.Output.Outcome != OK && h.Input.Kind == Read) || h.Output.Outcome == Refused {
			continue
		}
		ret := h.Return
		if h.Output.Outcome == Unknown {
			ret = math.MaxInt64
		}
		ops = append(ops, porcupine.Operation{
			ClientId: h.Client, Input: h.Input, Output: h.Output, Call: h.Call, Return: ret,
			Metadata: h.Server,
		})
	}
	return ops
}

// ErrCheckTimedOut is a check porcupine could not finish: it proves nothing, so it fails.
var ErrCheckTimedOut = errors.New("the linearizability check did not finish in time (porcupine answered unknown)")

// ErrNotLinearizable is a history no order of the operations explains.
var ErrNotLinearizable = errors.New("the history is not linearizable")

// Check checks the history and returns nil only for a linearizable one. info feeds the
// visualisation.
func Check(history []Op, timeout time.Duration) (porcupine.LinearizationInfo, error) {
	res, info := porcupine.CheckOperationsVerbose(RegisterModel, Operations(history), timeout)
	switch res {
	case porcupine.Ok:
		return info, nil
	case porcupine.Illegal:
		return info, ErrNotLinearizable
	default:
		return info, ErrCheckTimedOut
	}
}

// Save writes the history as <name>.json and porcupine's HTML visualisation of it under model
// as <name>.html into dir, and returns the path of the visualisation.
func Save(dir, name string, model porcupine.Model, history any, info porcupine.LinearizationInfo, notes []porcupine.Annotation) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	buf, err := json.MarshalIndent(history, "", " ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), buf, 0o644); err != nil {
		return "", err
	}
	info.AddAnnotations(notes)
	html := filepath.Join(dir, name+".html")
	if err := porcupine.VisualizePath(model, info, html); err != nil {
		return "", err
	}
	return html, nil
}

// FailingKeys checks each key on its own and names those whose history is not linearizable
// (or whose check did not finish), so a failure points at the key to look at in the
// visualisation.
func FailingKeys(history []Op, timeout time.Duration) []string {
	byKey := map[string][]Op{}
	var keys []string
	for _, op := range history {
		if _, ok := byKey[op.Input.Key]; !ok {
			keys = append(keys, op.Input.Key)
		}
		byKey[op.Input.Key] = append(byKey[op.Input.Key], op)
	}
	var bad []string
	for _, k := range keys {
		if porcupine.CheckOperationsTimeout(RegisterModel, Operations(byKey[k]), timeout) != porcupine.Ok {
			bad = append(bad, k)
		}
	}
	return bad
}
