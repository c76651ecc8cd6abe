//go:build e2e && e2ecluster

package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"syscall"
	"time"
)

// nemesis injects one fault at a time, holds it a few seconds, heals it and rests, until
// stopped; it heals whatever it holds before returning.
type nemesis struct {
	jc  *jepsenCluster
	rec *jepsenRecorder
	rng *rand.Rand
	// kinds are the faults it chooses from (JEPSEN_FAULTS; all of nemesisKinds by default).
	kinds []string
	count map[string]int
	// How often a kill of "kill-mid-snapshot" and "install-snapshot" landed inside the
	// snapshot (or only just after it: the line that says it completed came first).
	midSnapshot, afterSnapshot, midInstall, afterInstall int
	// held is how many packets the packet-delay faults held back.
	held uint64
}

var nemesisKinds = []string{
	"kill-leader", "kill-random", "pause-leader", "pause-random", "isolate-leader", "majority-minority",
	"disk-full-leader", "disk-full-random", "kill-mid-snapshot", "install-snapshot",
	"packet-loss", "packet-delay",
}

func (n *nemesis) summary() string {
	var parts []string
	for _, k := range nemesisKinds {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, n.count[k]))
	}
	return fmt.Sprintf("%s; kills: %d while a snapshot was being taken (%d more just after one), %d while a received snapshot was being installed (%d more just after); snapshots installed from a leader over the run: %d; packets held back by delays: %d",
		strings.Join(parts, ", "), n.midSnapshot, n.afterSnapshot, n.midInstall, n.afterInstall, n.jc.countLogs(logInstallCompleted), n.held)
}

// target is the leader when asked and one is known, else a random server.
func (n *nemesis) target(leader bool) *labHost {
	if leader {
		if l := n.jc.leader(); l != nil {
			return l
		}
	}
	return n.jc.servers[n.rng.Intn(len(n.jc.servers))]
}

func (n *nemesis) run(ctx context.Context) {
	n.count = map[string]int{}
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for sleep(time.Duration(1000+n.rng.Intn(1500)) * time.Millisecond) {
		kind := n.kinds[n.rng.Intn(len(n.kinds))]
		start := n.rec.now()
		var heal func()
		var desc string
		switch kind {
		case "kill-leader", "kill-random":
			h := n.target(kind == "kill-leader")
			n.jc.kill(h)
			desc = "kill -9 " + h.name
			heal = func() {
				if err := n.jc.start(h); err != nil {
					n.jc.t.Errorf("nemesis: restart %s: %v", h.name, err)
				}
			}
		case "pause-leader", "pause-random":
			h := n.target(kind == "pause-leader")
			n.jc.signal(h, syscall.SIGSTOP)
			desc = "SIGSTOP " + h.name
			heal = func() { n.jc.signal(h, syscall.SIGCONT) }
		case "disk-full-leader", "disk-full-random":
			h := n.target(kind == "disk-full-leader")
			if err := n.jc.fillDisk(h); err != nil {
				n.jc.t.Errorf("nemesis: %v", err)
			}
			desc = "disk full " + h.name
			heal = func() {
				if err := n.jc.freeDisk(h); err != nil {
					n.jc.t.Errorf("nemesis: %v", err)
				}
			}
		case "kill-mid-snapshot":
			// Any server: the leader's snapshot and a follower's are both taken while the
			// log keeps growing.
			h := n.jc.servers[n.rng.Intn(len(n.jc.servers))]
			seen, mid := n.jc.killMidSnapshot(h)
			switch {
			case mid:
				n.midSnapshot++
			case seen:
				n.afterSnapshot++
			}
			desc = fmt.Sprintf("kill -9 %s mid-snapshot (caught one: %v, before it completed: %v)", h.name, seen, mid)
			heal = func() {
				if err := n.jc.start(h); err != nil {
					n.jc.t.Errorf("nemesis: restart %s: %v", h.name, err)
				}
			}
		case "install-snapshot":
			// A follower down while the others write past raft_trailing_logs: when it comes
			// back the leader has compacted what it lacks and sends it a snapshot, and it is
			// killed again while it installs it.
			var h *labHost
			l := n.jc.leader()
			for _, i := range n.rng.Perm(len(n.jc.servers)) {
				if s := n.jc.servers[i]; s != l {
					h = s
					break
				}
			}
			var lOff int64
			if l != nil {
				lOff = n.jc.logOffset(l)
			}
			n.jc.kill(h)
			desc = "kill -9 " + h.name + ", restart it behind the leader's snapshot, kill it while it installs it"
			heal = func() {
				received, mid, err := n.jc.killDuringInstall(h, l, lOff)
				if err != nil {
					n.jc.t.Errorf("nemesis: restart %s: %v", h.name, err)
				}
				switch {
				case mid:
					n.midInstall++
				case received:
					n.afterInstall++
				}
			}
		case "isolate-leader", "majority-minority":
			var minority, majority []*labHost
			if kind == "isolate-leader" {
				l := n.target(true)
				minority = []*labHost{l}
				for _, s := range n.jc.servers {
					if s != l {
						majority = append(majority, s)
					}
				}
			} else {
				perm := n.rng.Perm(len(n.jc.servers))
				for i, p := range perm {
					if i < len(perm)/2 {
						minority = append(minority, n.jc.servers[p])
					} else {
						majority = append(majority, n.jc.servers[p])
					}
				}
			}
			if err := n.jc.partition(minority, majority); err != nil {
				n.jc.t.Errorf("nemesis: %v", err)
			}
			desc = fmt.Sprintf("partition %s | %s", hostNames(minority), hostNames(majority))
			heal = n.healNetwork
		case "packet-loss":
			share := 0.1 + 0.3*n.rng.Float64()
			if err := n.jc.dropShare(share); err != nil {
				n.jc.t.Errorf("nemesis: %v", err)
			}
			desc = fmt.Sprintf("%.0f%% of packets between servers lost", 100*share)
			heal = n.healNetwork
		case "packet-delay":
			// Up to 200 ms each way: around the servers' heartbeat timeouts, so leaders are
			// lost and elections are slow, but a quorum can still be heard.
			delay := time.Duration(20+n.rng.Intn(180)) * time.Millisecond
			if err := n.jc.slowDown(delay, delay/2, n.rng.Int63()); err != nil {
				n.jc.t.Errorf("nemesis: %v", err)
			}
			desc = fmt.Sprintf("packets between servers delayed %v (+ up to %v)", delay, delay/2)
			heal = n.healNetwork
		}
		n.count[kind]++
		n.jc.t.Logf("nemesis: %s", desc)
		sleep(time.Duration(2500+n.rng.Intn(2500)) * time.Millisecond)
		heal()
		n.rec.fault(desc, start, n.rec.now())
	}
}

func (n *nemesis) healNetwork() {
	held, err := n.jc.healNetwork()
	if err != nil {
		n.jc.t.Errorf("nemesis: %v", err)
	}
	n.held += held
}

func hostNames(hs []*labHost) string {
	var names []string
	for _, h := range hs {
		names = append(names, h.name)
	}
	return strings.Join(names, ",")
}
