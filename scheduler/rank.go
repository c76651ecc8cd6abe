package scheduler

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Names of the scores in an allocation's ScoreMetaData, as upstream's.
const (
	scoreBinPack      = "binpack"
	scoreAntiAffinity = "job-anti-affinity"
	scoreAffinity     = "node-affinity"
	scoreSpread       = "allocation-spread"
	scorePenalty      = "node-reschedule-penalty"
)

// Scheduler algorithms (the scheduler configuration's scheduler_algorithm).
const (
	AlgorithmBinPack = "binpack"
	AlgorithmSpread  = "spread"
)

// scoreMetaKept is how many of the best nodes each placement's metrics describe.
const scoreMetaKept = 5

// rankLimit is how many fitting nodes a placement without spreads or affinities ranks.
const rankLimit = 64

// defaultSpreadWeight is a spread block's weight when it gives none, as upstream.
const defaultSpreadWeight = 50

// rankStatic fills what ranking reads of a candidate that no placement changes: its
// affinity score and its spread attribute values.
func (g *group) rankStatic(c *candidate) {
	var sum, total float64
	for _, a := range g.affinities {
		w := 50.0 // upstream's default affinity weight
		if a.Weight != nil {
			w = float64(*a.Weight)
		}
		if w == 0 {
			continue
		}
		total += abs(w)
		if g.st.match.matches(a.Operand, a.LTarget, a.RTarget, c.node) {
			sum += w
		}
	}
	if total > 0 {
		c.affinity, c.hasAffinity = sum/total, true
	}
	c.spreadVals = make([]string, len(g.spreads))
	c.spreadSet = make([]bool, len(g.spreads))
	var key strings.Builder
	for i, sp := range g.spreads {
		c.spreadVals[i], c.spreadSet[i] = resolveTarget(sp.Attribute, c.node)
		if c.spreadSet[i] {
			key.WriteString(c.spreadVals[i])
		}
		key.WriteByte(0)
	}
	c.spreadKey = key.String()
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// scores are one node's ranking for one placement; has says which apply.
type scores struct {
	binpack, anti, affinity, spread float64
	hasBin, hasAnti, hasAff, hasSp  bool
	// penalty is set on the node the allocation being replaced failed on.
	penalty bool
	norm    float64
}

// score ranks node c for one more allocation of the group: the mean of the scores that apply,
// each within [-1, 1], as upstream normalises them.
func (g *group) score(c *candidate, u *usage) scores {
	var s scores
	n := 0
	sum := 0.0
	capy := c.capy
	if capy.cpu > 0 && capy.mem > 0 {
		cpu := float64(u.cpu+g.ask.cpu+int64(g.ask.cores)*capy.mhzPerCore) / float64(capy.cpu)
		mem := float64(u.mem+g.ask.mem) / float64(capy.mem)
		fit := min(max((cpu+mem)/2, 0), 1)
		if g.st.in.Algorithm == AlgorithmSpread {
			fit = 1 - fit
		}
		s.binpack, s.hasBin = fit, true
		sum += fit
		n++
	}
	if !g.system() {
		if coll := c.on; coll > 0 {
			s.anti = -float64(coll+1) / float64(max(g.count(), 1))
			s.anti = max(s.anti, -1)
			s.hasAnti = true
			sum += s.anti
			n++
		}
	}
	if c.hasAffinity {
		s.affinity, s.hasAff = c.affinity, true
		sum += c.affinity
		n++
	}
	if len(g.spreads) > 0 {
		if g.spreadCounts == nil {
			for i, sp := range g.spreads {
				g.spreadCounts = append(g.spreadCounts, g.propCounts("sp"+strconv.Itoa(i), sp.Attribute, false))
			}
		}
		s.spread, s.hasSp = g.spreadScore(c), true
		sum += s.spread
		n++
	}
	if slices.Contains(g.penalised, c.node.ID) {
		s.penalty = true
		sum--
		n++
	}
	if n > 0 {
		s.norm = sum / float64(n)
	}
	return s
}

// spreadScore is the weighted boost of placing on c for each spread block: positive while
// the node's value would stay below its target share, negative past it, -1 for a node
// without the attribute. Without targets every value the candidates have gets an equal
// share; values a target list leaves out share what the targets leave, counted together.
func (g *group) spreadScore(c *candidate) float64 {
	var sum, weights float64
	total := float64(max(g.count(), 1))
	for i, sp := range g.spreads {
		w := float64(defaultSpreadWeight)
		if sp.Weight != nil {
			w = float64(*sp.Weight)
		}
		if w <= 0 {
			continue
		}
		weights += w
		if !c.spreadSet[i] {
			sum -= w
			continue
		}
		counts := g.spreadCounts[i]
		v := c.spreadVals[i]
		var desired, current float64
		if len(sp.SpreadTarget) > 0 {
			pct, explicit, rest := 0.0, false, 100.0
			for _, t := range sp.SpreadTarget {
				if t == nil {
					continue
				}
				rest -= float64(t.Percent)
				if t.Value == v {
					pct, explicit = float64(t.Percent), true
				}
			}
			current = float64(counts[v])
			if !explicit {
				// Values without a target share what the targets leave, counted together.
				pct = max(rest, 0)
				current = 0
				for val, cnt := range counts {
					if !hasTarget(sp, val) {
						current += float64(cnt)
					}
				}
			}
			desired = pct / 100 * total
		} else {
			desired = total / float64(max(g.spreadVals[i], 1))
			current = float64(counts[v])
		}
		// Counted with the allocation being placed, so that a value already at its target
		// scores below one still short of it.
		boost := -1.0
		if desired > 0 {
			boost = min(max((desired-current-1)/desired, -1), 1)
		}
		sum += w * boost
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

func hasTarget(sp *api.Spread, v string) bool {
	for _, t := range sp.SpreadTarget {
		if t != nil && t.Value == v {
			return true
		}
	}
	return false
}

// count is the group's count; a negative one (refused at register) counts as 0.
func (g *group) count() int {
	if g.tg.Count == nil {
		return 1
	}
	return max(*g.tg.Count, 0)
}

// attempt is one placement's search: the best node, and the metrics of what was tried.
type attempt struct {
	best      *candidate
	bestU     *usage
	bestScore scores
	filtered  map[string]int
	classFilt map[string]int
	exhausted int
	classExh  map[string]int
	dims      map[string]int
	top       []scored
}

type scored struct {
	node string
	s    scores
}

func (a *attempt) exhaust(n *structs.Node, dim string) {
	a.exhausted++
	if a.dims == nil {
		a.dims, a.classExh = map[string]int{}, map[string]int{}
	}
	a.dims[dim]++
	if n.NodeClass != "" {
		a.classExh[n.NodeClass]++
	}
}

func (a *attempt) filter(n *structs.Node, reason string) {
	if a.filtered == nil {
		a.filtered, a.classFilt = map[string]int{}, map[string]int{}
	}
	a.filtered[reason]++
	if n.NodeClass != "" {
		a.classFilt[n.NodeClass]++
	}
}

// try checks one candidate and keeps it when it ranks best so far. Ties go to the node with
// fewer of the group's allocations, then fewer allocations overall, then the lower ID, so
// that the plan is the same for the same input.
func (g *group) try(a *attempt, c *candidate) bool {
	n := c.node
	if reason := g.distinctInfeasible(n); reason != "" {
		a.filter(n, reason)
		return false
	}
	if c.u == nil {
		c.u = g.st.usageOf(n)
	}
	u := c.u
	if dim := g.fit(c.capy, u); dim != "" {
		a.exhaust(n, dim)
		return false
	}
	s := g.score(c, u)
	a.keepTop(n.ID, s)
	if a.best == nil || better(g, s, c, a.bestScore, a.best) {
		a.best, a.bestU, a.bestScore = c, u, s
	}
	return true
}

func better(g *group, s scores, c *candidate, bs scores, b *candidate) bool {
	if s.norm != bs.norm {
		return s.norm > bs.norm
	}
	if c.on != b.on {
		return c.on < b.on
	}
	if c.load != b.load {
		return c.load < b.load
	}
	return c.node.ID < b.node.ID
}

func (a *attempt) keepTop(id string, s scores) {
	i := sort.Search(len(a.top), func(i int) bool { return a.top[i].s.norm < s.norm })
	if i >= scoreMetaKept {
		return
	}
	a.top = append(a.top, scored{})
	copy(a.top[i+1:], a.top[i:])
	a.top[i] = scored{node: id, s: s}
	if len(a.top) > scoreMetaKept {
		a.top = a.top[:scoreMetaKept]
	}
}

// metric is the group's static metric with what this attempt found.
func (g *group) attemptMetric(a *attempt) *api.AllocationMetric {
	m := copyMetric(g.metric)
	for k, v := range a.filtered {
		m.NodesFiltered += v
		m.ConstraintFiltered[k] += v
	}
	for k, v := range a.classFilt {
		m.ClassFiltered[k] += v
	}
	m.NodesExhausted += a.exhausted
	for k, v := range a.dims {
		m.DimensionExhausted[k] += v
	}
	for k, v := range a.classExh {
		m.ClassExhausted[k] += v
	}
	for _, t := range a.top {
		meta := &api.NodeScoreMeta{NodeID: t.node, Scores: map[string]float64{}, NormScore: t.s.norm}
		if t.s.hasBin {
			meta.Scores[scoreBinPack] = t.s.binpack
		}
		if t.s.hasAnti {
			meta.Scores[scoreAntiAffinity] = t.s.anti
		}
		if t.s.hasAff {
			meta.Scores[scoreAffinity] = t.s.affinity
		}
		if t.s.hasSp {
			meta.Scores[scoreSpread] = t.s.spread
		}
		if t.s.penalty {
			meta.Scores[scorePenalty] = -1
		}
		m.ScoreMetaData = append(m.ScoreMetaData, meta)
	}
	return m
}

// placeOrCount places the allocation with name index idx, one of left still to place. When
// the plan is full it defers all left, when no node can take it it queues all left, and it
// reports false: the caller places no more of them.
func (g *group) placeOrCount(idx, left int) bool {
	if g.plan.full() {
		g.plan.Deferred[g.name] += left
		return false
	}
	if g.computeFeasible(); len(g.cands) == 0 {
		g.queue(left, copyMetric(g.metric))
		return false
	}
	if prev := g.destroyed[idx]; prev != nil && g.keepsDisk() {
		// A sticky disk stays where its data is, when the node still takes the group.
		for _, c := range g.cands {
			if c.node.ID != prev.NodeID {
				continue
			}
			a := &attempt{}
			if g.try(a, c) && a.best != nil {
				g.place(idx, a)
				return true
			}
			break
		}
	}
	// Without spreads or affinities, a placement ranks the first rankLimit nodes that fit,
	// scanning on from where the last placement stopped, as upstream limits its search: the
	// cost of a placement then does not grow with the cluster. With spreads (and no
	// affinities) every spread value is ranked, so the targets are met exactly, but within
	// one tuple of values only its first perValue fitting nodes: they all get the same spread
	// score, and ranking a whole rack for each placement made a spread cost nodes x allocs.
	// Affinities score each node on its own, so a group with them ranks every node.
	limit, perValue := len(g.cands), 0
	switch {
	case len(g.affinities) > 0:
	case len(g.spreads) == 0:
		limit = min(limit, rankLimit)
	default:
		if g.spreadBuckets == 0 {
			keys := map[string]struct{}{}
			for _, c := range g.cands {
				keys[c.spreadKey] = struct{}{}
			}
			g.spreadBuckets = len(keys)
		}
		perValue = max(2, rankLimit/g.spreadBuckets)
	}
	g.penalised = g.failedOn[idx]
	a := &attempt{}
	var fitsPer map[string]int
	if perValue > 0 {
		fitsPer = make(map[string]int, g.spreadBuckets)
	}
	n, fits, scanned := len(g.cands), 0, 0
	for ; scanned < n && fits < limit; scanned++ {
		c := g.cands[(g.cursor+scanned)%n]
		if perValue > 0 && fitsPer[c.spreadKey] >= perValue {
			continue
		}
		if g.try(a, c) {
			fits++
			if perValue > 0 {
				fitsPer[c.spreadKey]++
			}
		}
	}
	if a.best == nil {
		// No node has room: evicting lower-priority allocations may make some, when the
		// configuration allows it for the job's type.
		if g.st.preemptionEnabled(g.job.Type) {
			for _, c := range g.cands {
				if g.placeWithPreemption(c, idx) {
					return true
				}
			}
		}
		g.queue(left, g.attemptMetric(a))
		return false
	}
	if limit < n {
		g.cursor = (g.cursor + scanned) % n
	}
	g.place(idx, a)
	return true
}

// placeOn places a system group's allocation on its node, or defers it when the plan is
// full, or queues it when the node lacks room.
func (g *group) placeOn(c *candidate) {
	if g.plan.full() {
		g.plan.Deferred[g.name]++
		return
	}
	a := &attempt{}
	g.try(a, c)
	if a.best == nil {
		if g.placeWithPreemption(c, 0) {
			return
		}
		g.queue(1, g.attemptMetric(a))
		return
	}
	g.place(0, a)
}

// queue counts n allocations of the group that no node can take; the first failure's
// metric explains them all.
func (g *group) queue(n int, m *api.AllocationMetric) {
	g.plan.Queued[g.name] += n
	if g.plan.Failed[g.name] == nil {
		g.plan.Failed[g.name] = m
		n--
	}
	g.plan.Failed[g.name].CoalescedFailures += n
}

// place plans a new allocation with name index idx on the attempt's best node.
func (g *group) place(idx int, a *attempt) {
	node, u := a.best.node, a.bestU
	ar, am := g.allocate(node, u)
	u.add(am, 1)
	a.best.on++
	a.best.load++
	g.onNode[node.ID]++
	g.st.jobOnNode[node.ID]++
	g.st.load[node.ID]++
	for _, p := range g.propTargets {
		if v, ok := resolveTarget(p.target, node); ok {
			g.props[p.key][v]++
		}
	}
	res := &api.Resources{CPU: new(int(am.cpu)), MemoryMB: new(int(am.mem)), DiskMB: new(int(am.disk))}
	g.plan.Place = append(g.plan.Place, &structs.Allocation{
		Namespace:          g.job.Namespace,
		Name:               structs.AllocName(g.job.ID, g.name, idx),
		NodeID:             node.ID,
		NodeName:           node.Name,
		JobID:              g.job.ID,
		Job:                g.job,
		TaskGroup:          g.name,
		Resources:          res,
		AllocatedResources: ar,
		Metrics:            g.attemptMetric(a),
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
	})
	if prev := g.destroyed[idx]; prev != nil {
		g.plan.Place[len(g.plan.Place)-1].PreviousAllocation = prev.ID
		delete(g.destroyed, idx)
	}
	if prev := g.disconnected[idx]; prev != nil {
		// An unknown original wins over a lost allocation of its index (its replacement,
		// lost in turn): should the original reconnect, the reconcile strategy pairs it with
		// the replacement that runs now by this name (reconnectLosers).
		g.plan.Place[len(g.plan.Place)-1].PreviousAllocation = prev.ID
		delete(g.disconnected, idx)
	}
	if prev := g.rescheduled[idx]; prev != nil {
		placed := g.plan.Place[len(g.plan.Place)-1]
		placed.PreviousAllocation = prev.ID
		placed.RescheduleTracker = rescheduleTracker(prev, g.st.in.Now)
		delete(g.rescheduled, idx)
	}
}
