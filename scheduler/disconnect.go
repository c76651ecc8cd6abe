package scheduler

import (
	"time"

	"github.com/nomadfork/nomad/structs"
)

// Reasons of the disconnect block's decisions; they become DesiredDescription.
const (
	ReasonDisconnectLost      = "alloc lost: its node stayed disconnected past the group's lost_after"
	ReasonReconnectOriginal   = "alloc not needed: the original allocation reconnected and was kept"
	ReasonReconnectReplacment = "alloc not needed: the replacement of this reconnected allocation was kept"
)

// unknownVerdict is what to do with an allocation whose node disconnected.
type unknownVerdict int

const (
	// unknownWait: still within lost_after; it keeps its name, and a replacement is placed
	// beside it when the group's disconnect block says replace.
	unknownWait unknownVerdict = iota
	// unknownLost: lost_after passed (or the group has none): lost, stopped and replaced.
	unknownLost
)

// judgeUnknown decides about an unknown allocation at the plan's time, noting the follow-up
// evaluation that must come back when its lost_after passes. A plan without a time (job plan)
// treats every unknown allocation as still within its window.
func (g *group) judgeUnknown(a *structs.Allocation) unknownVerdict {
	d := structs.DisconnectFor(g.tg)
	since := a.UnknownSince()
	if d.LostAfter <= 0 || since.IsZero() {
		return unknownLost
	}
	deadline := since.Add(d.LostAfter)
	now := g.st.in.Now
	if !now.IsZero() && !now.Before(deadline) {
		return unknownLost
	}
	g.plan.noteFollowup(structs.EvalTriggerMaxDisconnectTimeout, deadline)
	return unknownWait
}

// lose plans an unknown allocation to become lost and stopped, giving back its room.
func (st *state) lose(a *structs.Allocation) {
	st.plan.Lost = append(st.plan.Lost, a)
	st.stopped[a.ID] = true
	if st.jobOnNode[a.NodeID] > 0 {
		st.jobOnNode[a.NodeID]--
	}
	if u := st.usage[a.NodeID]; u != nil && u.ids[a.ID] {
		delete(u.ids, a.ID)
		u.add(allocAmount(a), -1)
	}
}

// reconnectLosers applies the group's reconcile strategy to every allocation that came back
// from a disconnect while a replacement of it runs: of each pair, the one the strategy does
// not keep is returned with the reason it is stopped. allocs are the group's allocations
// that the servers want running.
func (g *group) reconnectLosers(allocs []*structs.Allocation) map[string]string {
	replacementOf := map[string]*structs.Allocation{}
	for _, a := range allocs {
		if a.PreviousAllocation != "" && !a.ClientTerminalStatus() && a.ClientStatus != structs.AllocClientStatusUnknown {
			replacementOf[a.PreviousAllocation] = a
		}
	}
	if len(replacementOf) == 0 {
		return nil
	}
	strategy := structs.DisconnectFor(g.tg).Reconcile
	losers := map[string]string{}
	for _, orig := range allocs {
		repl := replacementOf[orig.ID]
		if repl == nil || !orig.Reconnected() || orig.ClientTerminalStatus() || losers[orig.ID] != "" {
			continue
		}
		if keepOriginal(strategy, orig, repl) {
			losers[repl.ID] = ReasonReconnectOriginal
		} else {
			losers[orig.ID] = ReasonReconnectReplacment
		}
	}
	return losers
}

// keepOriginal reports whether the reconcile strategy keeps the reconnected original rather
// than its replacement. Ties go to the original, as upstream.
func keepOriginal(strategy string, orig, repl *structs.Allocation) bool {
	switch strategy {
	case structs.ReconcileKeepOriginal:
		return true
	case structs.ReconcileKeepReplacement:
		return false
	case structs.ReconcileLongestRunning:
		o, r := startedAt(orig), startedAt(repl)
		return r.IsZero() || (!o.IsZero() && !r.Before(o))
	default: // best_score
		return nodeScore(orig) >= nodeScore(repl)
	}
}

// startedAt is when the allocation's first task started, or its creation time when no task
// reported a start.
func startedAt(a *structs.Allocation) time.Time {
	var first time.Time
	for _, ts := range a.TaskStates {
		if ts != nil && !ts.StartedAt.IsZero() && (first.IsZero() || ts.StartedAt.Before(first)) {
			first = ts.StartedAt
		}
	}
	if first.IsZero() && a.CreateTime > 0 {
		first = time.Unix(0, a.CreateTime)
	}
	return first
}

// nodeScore is the normalised score the scheduler gave the allocation's node when it placed
// it, 0 when not recorded.
func nodeScore(a *structs.Allocation) float64 {
	if a.Metrics == nil {
		return 0
	}
	for _, m := range a.Metrics.ScoreMetaData {
		if m != nil && m.NodeID == a.NodeID {
			return m.NormScore
		}
	}
	return 0
}
