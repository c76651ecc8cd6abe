package jepsen

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// SetOp is one operation of the set workload: Add registers the job Element; a read (Add
// false) lists the jobs and saw Elements. Outcome is as for the register: an Unknown add may
// have happened, a Fail add did not, a read that did not answer is left out.
type SetOp struct {
	Client   int      `json:"client"`
	Server   string   `json:"server"`
	Add      bool     `json:"add"`
	Element  string   `json:"element,omitempty"`
	Elements []string `json:"elements,omitempty"`
	Outcome  Outcome  `json:"outcome"`
	Call     int64    `json:"call"`
	Return   int64    `json:"return"`
	Err      string   `json:"err,omitempty"`
}

// setState is the set as its sorted elements joined by commas: comparable, so porcupine's
// cache and its shallow equality work on it.
func setState(elems []string) string {
	e := append([]string(nil), elems...)
	sort.Strings(e)
	return strings.Join(e, ",")
}

func setAdd(state, x string) string {
	if state == "" {
		return x
	}
	elems := strings.Split(state, ",")
	for _, e := range elems {
		if e == x {
			return state
		}
	}
	return setState(append(elems, x))
}

// SetModel is a grow-only set, starting empty: a read must see exactly the elements added
// before it (linearizable, so a listing never misses an acknowledged registration, and never
// shows one and then not).
var SetModel = porcupine.Model{
	Init: func() interface{} { return "" },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s := state.(string)
		op := input.(SetOp)
		if op.Add {
			// OK or Unknown: an Unknown add reaching this point is the order where it happened.
			return true, setAdd(s, op.Element)
		}
		return setState(op.Elements) == s, s
	},
	DescribeOperation: func(input, output interface{}) string {
		op := input.(SetOp)
		if op.Add {
			return fmt.Sprintf("add %s: %s", op.Element, op.Outcome)
		}
		return fmt.Sprintf("read → %d elements", len(op.Elements))
	},
	DescribeState: func(state interface{}) string {
		if state.(string) == "" {
			return "{}"
		}
		return fmt.Sprintf("{%d elements}", strings.Count(state.(string), ",")+1)
	},
}

// SetOperations turns the set history into porcupine's, as Operations does for registers,
// with one tightening that keeps the search small on long runs (hundreds of open-ended adds
// made porcupine time out): an unknown add that no read saw is left out (never happening is
// always a valid order for it), and one that a read saw must have taken effect before that
// read answered, so its end is the earliest answer of a read that saw it. Both are sound: they
// remove no order the open end allowed that could explain the reads.
func SetOperations(history []SetOp) []porcupine.Operation {
	seenBy := map[string]int64{}
	for _, h := range history {
		if h.Add || h.Outcome != OK {
			continue
		}
		for _, e := range h.Elements {
			if r, ok := seenBy[e]; !ok || h.Return < r {
				seenBy[e] = h.Return
			}
		}
	}
	ops := make([]porcupine.Operation, 0, len(history))
	for _, h := range history {
		if h.Outcome == Fail || h.Outcome == Refused || (!h.Add && h.Outcome != OK) {
			continue
		}
		ret := h.Return
		if h.Outcome == Unknown {
			r, ok := seenBy[h.Element]
			if !ok {
				continue
			}
			ret = r
			if ret < h.Call {
				// Seen before it was called: keep the call so the checker reports it.
				ret = math.MaxInt64
			}
		}
		ops = append(ops, porcupine.Operation{ClientId: h.Client, Input: h, Output: nil, Call: h.Call, Return: ret, Metadata: h.Server})
	}
	return ops
}

// CheckSet checks the set history; nil only for a linearizable one.
func CheckSet(history []SetOp, timeout time.Duration) (porcupine.LinearizationInfo, error) {
	res, info := porcupine.CheckOperationsVerbose(SetModel, SetOperations(history), timeout)
	switch res {
	case porcupine.Ok:
		return info, nil
	case porcupine.Illegal:
		return info, ErrNotLinearizable
	default:
		return info, ErrCheckTimedOut
	}
}
