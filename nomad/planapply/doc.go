// Package planapply is the leader's plan applier: the one goroutine through which every
// scheduling worker's plan reaches Raft.
//
// Workers plan in parallel, each on its own point-in-time snapshot, so two of them may both
// see room on a node that has room for only one of their placements. The applier takes the
// plans one at a time, checks each placement against the latest state (the node still exists,
// is ready, eligible and not draining; the node's allocations committed since the worker's
// snapshot plus this plan's still fit its CPU, cores, memory and disk; no port is taken
// twice), and commits what still fits. What does not is refused, node by node, and the worker
// is told the index to refresh its snapshot to before it plans the refused part again.
// This is optimistic concurrency: nothing is locked while workers plan; a conflict costs a
// replan.
//
// It may import structs, state and scheduler (for the fit check the scheduler itself uses),
// never the server: it writes only through the Apply function it is given.
//
// What must stay true:
//   - Plans are evaluated and applied strictly one after another, and the next is evaluated
//     only after the previous one's entry is applied to the local state, so the latest state
//     always holds every placement the applier accepted.
//   - A plan with a refused placement commits its accepted part without its evaluation
//     updates: the worker replans on fresher state and its final plan completes the
//     evaluation, with counts that match what was placed.
//   - One goroutine, owned by the leader for one term (Run returns when its context ends);
//     Submit never blocks past its own context or the applier's end.
package planapply
