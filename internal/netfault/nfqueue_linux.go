// Package netfault slows a network namespace's packets down for the Jepsen-style tests, where
// the kernel has no netem qdisc. An iptables rule sends the packets to an NFQUEUE; a Delayer
// reads them from the kernel and gives each its verdict (accept) only once it has been held
// for the delay, so TCP, UDP and gossip all see a slower link, including connections that were
// open before the fault began. Packet loss needs no program: iptables' statistic match drops a
// share of packets on its own.
//
// The NFQUEUE protocol is spoken here over a plain netlink socket: the Go libraries for it
// (florianl/go-nfqueue) are not served by our module proxy, and the part needed (bind a queue,
// read packet ids, send verdicts) is small.
package netfault

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// nfnetlink_queue constants (linux/netfilter/nfnetlink_queue.h, nfnetlink.h).
const (
	nfnlSubsysQueue = 3

	msgPacket  = nfnlSubsysQueue<<8 | 0
	msgVerdict = nfnlSubsysQueue<<8 | 1
	msgConfig  = nfnlSubsysQueue<<8 | 2
	// msgVerdictBatch gives one verdict to every queued packet up to an id.
	msgVerdictBatch = nfnlSubsysQueue<<8 | 3

	attrPacketHdr  = 1
	attrVerdictHdr = 2

	cfgCmd      = 1
	cfgParams   = 2
	cfgQueueMax = 3
	cfgMask     = 4
	cfgFlags    = 5

	cmdBind   = 1
	cmdUnbind = 2

	copyMeta = 1
	// flagFailOpen lets packets through, rather than dropping them, when the queue is full:
	// a delay fault must never turn into a loss fault behind the test's back.
	flagFailOpen = 1

	verdictAccept = 1
)

// Delayer holds the packets an NFQUEUE rule sends to its queue for Delay plus up to Jitter
// (drawn per packet, never reordering them) before accepting them.
type Delayer struct {
	fd    int
	queue uint16
	delay time.Duration
	jitt  time.Duration
	rng   *rand.Rand

	held    chan heldPacket
	stop    chan struct{}
	wg      sync.WaitGroup
	seq     uint32
	passed  atomic.Uint64
	lastID  atomic.Uint32
	sendErr atomic.Value // error

	closeOnce sync.Once
}

type heldPacket struct {
	id      uint32
	release time.Time
}

// StartDelayer binds queue in the network namespace named ns (as in `ip netns`; "" is the
// caller's own) and starts holding its packets. Close releases every held packet and unbinds.
func StartDelayer(ns string, queue uint16, delay, jitter time.Duration, seed int64) (*Delayer, error) {
	fd, err := socketIn(ns)
	if err != nil {
		return nil, err
	}
	d := &Delayer{
		fd: fd, queue: queue, delay: delay, jitt: jitter, rng: rand.New(rand.NewSource(seed)),
		held: make(chan heldPacket, 1<<16), stop: make(chan struct{}),
	}
	if err := d.configure(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	d.wg.Add(2)
	go d.read()
	go d.release()
	return d, nil
}

// socketIn opens a netfilter netlink socket inside ns. A socket belongs to the namespace it
// was created in, so only the creating thread needs to enter ns, and leaves it at once.
func socketIn(ns string) (int, error) {
	open := func() (int, error) {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
		if err != nil {
			return -1, fmt.Errorf("netlink socket: %w", err)
		}
		// Big enough that a burst of packets is not lost between reads (a lost message would
		// leave its packet queued until Close).
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
		_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_NO_ENOBUFS, 1)
		tv := unix.NsecToTimeval(int64(50 * time.Millisecond))
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("netlink bind: %w", err)
		}
		return fd, nil
	}
	if ns == "" {
		return open()
	}
	runtime.LockOSThread()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	defer own.Close()
	target, err := os.Open("/var/run/netns/" + ns)
	if err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return -1, fmt.Errorf("entering netns %s: %w", ns, err)
	}
	fd, openErr := open()
	if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked, so the runtime ends it with this goroutine rather than
		// reuse a thread that is in the wrong namespace.
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("leaving netns %s: %w", ns, err)
	}
	runtime.UnlockOSThread()
	return fd, openErr
}

func (d *Delayer) configure() error {
	be32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	bind := []byte{cmdBind, 0, 0, unix.AF_INET}
	params := append(be32(0), copyMeta)
	steps := [][]attr{
		{{cfgCmd, bind}},
		{{cfgParams, params}, {cfgQueueMax, be32(1 << 14)}, {cfgMask, be32(flagFailOpen)}, {cfgFlags, be32(flagFailOpen)}},
	}
	for _, attrs := range steps {
		if err := d.request(msgConfig, unix.NLM_F_ACK, attrs); err != nil {
			return fmt.Errorf("nfqueue %d config: %w", d.queue, err)
		}
		if err := d.awaitAck(); err != nil {
			return fmt.Errorf("nfqueue %d config: %w", d.queue, err)
		}
	}
	return nil
}

type attr struct {
	kind    uint16
	payload []byte
}

func (d *Delayer) request(kind uint16, flags uint16, attrs []attr) error {
	d.seq++
	msg := make([]byte, unix.NLMSG_HDRLEN, 64)
	// nfgenmsg: family, version, queue number (big endian).
	msg = append(msg, unix.AF_UNSPEC, 0, byte(d.queue>>8), byte(d.queue))
	for _, a := range attrs {
		n := 4 + len(a.payload)
		msg = binary.NativeEndian.AppendUint16(msg, uint16(n))
		msg = binary.NativeEndian.AppendUint16(msg, a.kind)
		msg = append(msg, a.payload...)
		for len(msg)%4 != 0 {
			msg = append(msg, 0)
		}
	}
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], kind)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|flags)
	binary.NativeEndian.PutUint32(msg[8:], d.seq)
	return unix.Sendto(d.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
}

func (d *Delayer) awaitAck() error {
	buf := make([]byte, 1<<16)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		n, _, err := unix.Recvfrom(d.fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Header.Type != unix.NLMSG_ERROR || m.Header.Seq != d.seq || len(m.Data) < 4 {
				continue
			}
			if code := int32(binary.NativeEndian.Uint32(m.Data)); code != 0 {
				return unix.Errno(-code)
			}
			return nil
		}
	}
	return errors.New("no answer from the kernel (is nfnetlink_queue built in?)")
}

// read takes packet ids from the kernel and queues them for release in arrival order.
func (d *Delayer) read() {
	defer d.wg.Done()
	defer close(d.held)
	buf := make([]byte, 1<<16)
	var last time.Time
	for {
		select {
		case <-d.stop:
			return
		default:
		}
		n, _, err := unix.Recvfrom(d.fd, buf, 0)
		if err != nil {
			continue // the receive timeout, so that stop is seen
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			continue
		}
		for _, m := range msgs {
			id, ok := packetID(m)
			if !ok {
				continue
			}
			d.lastID.Store(id)
			release := time.Now().Add(d.delay)
			if d.jitt > 0 {
				release = release.Add(time.Duration(d.rng.Int63n(int64(d.jitt))))
			}
			// Never before the packet in front of it: a later packet that overtook an earlier
			// one would look like reordering, which netem does only when asked.
			if release.Before(last) {
				release = last
			}
			last = release
			d.held <- heldPacket{id: id, release: release}
		}
	}
}

func packetID(m syscall.NetlinkMessage) (uint32, bool) {
	if m.Header.Type != msgPacket || len(m.Data) < 4 {
		return 0, false
	}
	rest := m.Data[4:]
	for len(rest) >= 4 {
		n := int(binary.NativeEndian.Uint16(rest))
		kind := binary.NativeEndian.Uint16(rest[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if n < 4 || n > len(rest) {
			return 0, false
		}
		if kind == attrPacketHdr && n >= 8 {
			return binary.BigEndian.Uint32(rest[4:]), true
		}
		rest = rest[min((n+3)&^3, len(rest)):]
	}
	return 0, false
}

// release accepts each held packet when its time comes; after Close it accepts the rest at
// once.
func (d *Delayer) release() {
	defer d.wg.Done()
	stopped := false
	for p := range d.held {
		if !stopped {
			wait := time.Until(p.release)
			if wait > 0 {
				select {
				case <-time.After(wait):
				case <-d.stop:
					stopped = true
				}
			}
		}
		verdict := append(binary.BigEndian.AppendUint32(nil, verdictAccept), binary.BigEndian.AppendUint32(nil, p.id)...)
		if err := d.request(msgVerdict, 0, []attr{{attrVerdictHdr, verdict}}); err != nil {
			d.sendErr.Store(err)
			continue
		}
		d.passed.Add(1)
	}
}

// Passed is how many packets the delayer has held and let through.
func (d *Delayer) Passed() uint64 { return d.passed.Load() }

// Close lets every held packet through, unbinds the queue and closes the socket. Remove the
// iptables rule first: a packet queued after the unbind waits for no one (the rule's
// --queue-bypass lets new ones through).
func (d *Delayer) Close() error {
	var err error
	d.closeOnce.Do(func() {
		close(d.stop)
		d.wg.Wait()
		// Packets the kernel queued but read did not take before it stopped would be dropped
		// by the unbind: accept them all. Ids grow by one per packet and the kernel compares
		// them modulo 2^32, so any id far enough past the last one seen covers them.
		all := append(binary.BigEndian.AppendUint32(nil, verdictAccept), binary.BigEndian.AppendUint32(nil, d.lastID.Load()+1<<30)...)
		if e := d.request(msgVerdictBatch, 0, []attr{{attrVerdictHdr, all}}); e != nil {
			err = e
		}
		if e := d.request(msgConfig, 0, []attr{{cfgCmd, []byte{cmdUnbind, 0, 0, unix.AF_INET}}}); e != nil && err == nil {
			err = e
		}
		if e := unix.Close(d.fd); e != nil && err == nil {
			err = e
		}
		if e, ok := d.sendErr.Load().(error); ok && err == nil {
			err = fmt.Errorf("a verdict was not sent: %w", e)
		}
	})
	return err
}
