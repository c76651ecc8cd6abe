package jepsen

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrStaleReadViolation is a stale-read history that breaks what ?stale reads promise.
var ErrStaleReadViolation = errors.New("stale reads broke their guarantees")

// CheckStale checks a register history whose reads were ?stale, answered by any server from
// its own state, which is not linearizable: a stale read may return a value older than one
// already acknowledged. What it must still hold:
//
//   - no invention: a read returns "" (absent) or a value some write had been called with
//     before the read returned, and never the value of a write refused by its check;
//   - one index per value: every read of a value sees the same ModifyIndex;
//   - monotonic per server: through one server process, a read that begins after another
//     read of the same key ended never sees an older ModifyIndex. starts holds, per server,
//     the times (as in the history) its processes were started: a restarted server begins
//     again from its snapshot and log, so reads are only compared within one process.
//
// It returns one line per violation (at most 20) wrapped in ErrStaleReadViolation.
func CheckStale(history []Op, starts map[string][]int64) error {
	written := map[string]map[string]Op{} // key -> value -> the write of it
	for _, op := range history {
		if op.Input.Kind != CAS {
			continue
		}
		if written[op.Input.Key] == nil {
			written[op.Input.Key] = map[string]Op{}
		}
		written[op.Input.Key][op.Input.New] = op
	}
	var bad []string
	report := func(format string, args ...any) {
		if len(bad) < 20 {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	type lane struct{ server, key string }
	lanes := map[lane][]Op{}
	indexOf := map[string]map[string]uint64{}
	for _, op := range history {
		if op.Input.Kind != Read || op.Output.Outcome != OK {
			continue
		}
		key, v := op.Input.Key, op.Output.Value
		if v != "" {
			w, ok := written[key][v]
			switch {
			case !ok:
				report("%s read %q through %s at %d: no write of that value", key, v, op.Server, op.Call)
			case w.Output.Outcome == Fail || w.Output.Outcome == Refused:
				report("%s read %q through %s at %d: the write of it was refused (%s)", key, v, op.Server, op.Call, w.Err)
			case w.Call > op.Return:
				report("%s read %q through %s at %d: written only at %d", key, v, op.Server, op.Call, w.Call)
			}
			if indexOf[key] == nil {
				indexOf[key] = map[string]uint64{}
			}
			if prev, ok := indexOf[key][v]; ok && prev != op.Output.Index {
				report("%s value %q read at index %d and at index %d", key, v, prev, op.Output.Index)
			}
			indexOf[key][v] = op.Output.Index
		}
		l := lane{op.Server, key}
		lanes[l] = append(lanes[l], op)
	}
	for l, reads := range lanes {
		sort.Slice(reads, func(i, j int) bool { return reads[i].Call < reads[j].Call })
		for j, b := range reads {
			for _, a := range reads[:j] {
				if a.Return >= b.Call || startedBetween(starts[l.server], a.Call, b.Call) {
					continue
				}
				if b.Output.Index < a.Output.Index {
					report("%s through %s went back: index %d (%q) read at %d-%d, then index %d (%q) at %d-%d",
						l.key, l.server, a.Output.Index, a.Output.Value, a.Call, a.Return, b.Output.Index, b.Output.Value, b.Call, b.Return)
				}
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("%w:\n%s", ErrStaleReadViolation, strings.Join(bad, "\n"))
}

// startedBetween says whether a server process was started in (from, to]: a read that began
// at from may have been answered by the process before.
func startedBetween(starts []int64, from, to int64) bool {
	for _, s := range starts {
		if s > from && s <= to {
			return true
		}
	}
	return false
}
