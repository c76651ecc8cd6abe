//go:build e2e && e2ecluster

package e2e

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nomadfork/nomad/internal/netfault"
	"github.com/shoenig/test/must"
)

// The nemesis's faults of a bad network, where our kernel has no netem: a share of the
// packets lost (iptables' statistic match drops them) and every packet held back (an NFQUEUE
// rule hands them to a netfault.Delayer, which lets each through once its delay is over).
// Both act on what a server receives from the other servers, so a link between two servers
// is lossy or slow in both directions; the clients' own requests are not touched.

// delayQueue is the NFQUEUE number in every server's namespace (queues are per namespace).
const delayQueue = 7

// peersOf is the addresses of every server but h.
func (jc *jepsenCluster) peersOf(h *labHost) []string {
	var ips []string
	for _, s := range jc.servers {
		if s != h {
			ips = append(ips, s.ip)
		}
	}
	return ips
}

// dropShare makes each server drop share (0–1) of the packets it receives from the others.
func (jc *jepsenCluster) dropShare(share float64) error {
	for _, h := range jc.servers {
		if err := dropFrom(h, share, jc.peersOf(h)); err != nil {
			return err
		}
	}
	return nil
}

// dropFrom makes h drop share (0–1) of the packets it receives from sources.
func dropFrom(h *labHost, share float64, sources []string) error {
	p := strconv.FormatFloat(share, 'f', 3, 64)
	for _, ip := range sources {
		if err := iptablesIn(h, "-A", "INPUT", "-s", ip, "-m", "statistic", "--mode", "random", "--probability", p, "-j", "DROP"); err != nil {
			return err
		}
	}
	return nil
}

// slowDown holds every packet each server receives from the others for delay plus up to
// jitter. healNetwork ends it.
func (jc *jepsenCluster) slowDown(delay, jitter time.Duration, seed int64) error {
	for i, h := range jc.servers {
		if err := jc.delayFrom(h, delay, jitter, seed+int64(i), jc.peersOf(h)); err != nil {
			return err
		}
	}
	return nil
}

// delayFrom holds every packet h receives from sources for delay plus up to jitter.
func (jc *jepsenCluster) delayFrom(h *labHost, delay, jitter time.Duration, seed int64, sources []string) error {
	d, err := netfault.StartDelayer(h.ns, delayQueue, delay, jitter, seed)
	if err != nil {
		return fmt.Errorf("delaying %s: %w", h.name, err)
	}
	jc.mu.Lock()
	jc.delayers[h.name] = d
	jc.mu.Unlock()
	for _, ip := range sources {
		// --queue-bypass: should the delayer be gone, packets pass rather than vanish.
		if err := iptablesIn(h, "-A", "INPUT", "-s", ip, "-j", "NFQUEUE", "--queue-num", strconv.Itoa(delayQueue), "--queue-bypass"); err != nil {
			return err
		}
	}
	return nil
}

// healNetwork removes every iptables rule (partitions, loss, delay) and then lets the packets
// still held through, in that order, so that none is queued after its delayer is gone.
// It answers how many packets were held back.
func (jc *jepsenCluster) healNetwork() (held uint64, err error) {
	for _, h := range jc.servers {
		if e := iptablesIn(h, "-F"); e != nil && err == nil {
			err = e
		}
	}
	jc.mu.Lock()
	delayers := jc.delayers
	jc.delayers = map[string]*netfault.Delayer{}
	jc.mu.Unlock()
	for name, d := range delayers {
		if e := d.Close(); e != nil && err == nil {
			err = fmt.Errorf("delayer of %s: %w", name, e)
		}
		held += d.Passed()
	}
	return held, err
}

// TestNetFault_LossAndDelay checks the two faults on one lab host, from the test's own leg:
// a connection to a closed port is refused in one round trip, so with the delay fault it is
// refused no sooner than the delay (and what is held when the fault heals goes through), and with loss a share of the attempts hear nothing at
// all (the kernel's first SYN retry comes after a second, long after the dial gives up).
func TestNetFault_LossAndDelay(t *testing.T) {
	lab := newLab(t)
	h := lab.host("nf1", 1)
	jc := &jepsenCluster{t: t, lab: lab, servers: []*labHost{h}, delayers: map[string]*netfault.Delayer{}}
	router := labSubnet + ".254"
	closedPort := h.ip + ":9"

	refusedIn := func() (time.Duration, bool) {
		start := time.Now()
		c, err := net.DialTimeout("tcp", closedPort, 250*time.Millisecond)
		if c != nil {
			c.Close()
		}
		return time.Since(start), errors.Is(err, syscall.ECONNREFUSED)
	}

	_, refused := refusedIn()
	must.True(t, refused, must.Sprint("with no fault, the closed port refuses at once"))

	const delay = 150 * time.Millisecond
	must.NoError(t, jc.delayFrom(h, delay, 0, 1, []string{router}))
	for i := 0; i < 5; i++ {
		took, refused := refusedIn()
		must.True(t, refused, must.Sprintf("a delayed SYN still reaches the host (attempt %d)", i))
		must.GreaterEq(t, delay, took, must.Sprintf("the SYN was held for the delay (attempt %d took %v)", i, took))
	}
	held, err := jc.healNetwork()
	must.NoError(t, err)
	must.GreaterEq(t, uint64(5), held)

	// Healing lets what is held through at once rather than drop it: one UDP datagram to a
	// closed port, held for a minute, is answered (ICMP port unreachable) once the fault is
	// healed. UDP sends it once, so a datagram dropped at the heal would never be answered.
	must.NoError(t, jc.delayFrom(h, time.Minute, 0, 1, []string{router}))
	udp, err := net.Dial("udp", closedPort)
	must.NoError(t, err)
	defer udp.Close()
	_, err = udp.Write([]byte("held"))
	must.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	_, err = jc.healNetwork()
	must.NoError(t, err)
	must.NoError(t, udp.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = udp.Read(make([]byte, 16))
	must.ErrorIs(t, err, syscall.ECONNREFUSED, must.Sprint("the held datagram reached the host when the fault was healed"))

	const share = 0.5
	must.NoError(t, dropFrom(h, share, []string{router}))
	lost := 0
	const attempts = 120
	for i := 0; i < attempts; i++ {
		if _, refused := refusedIn(); !refused {
			lost++
		}
	}
	// Binomial(120, 0.5) lies outside 30–90 with a probability below 1e-7.
	must.Between(t, 30, lost, 90, must.Sprintf("%d of %d attempts lost at a 50%% drop", lost, attempts))
	_, err = jc.healNetwork()
	must.NoError(t, err)
	_, refused = refusedIn()
	must.True(t, refused, must.Sprint("healed, the closed port refuses at once again"))
}
