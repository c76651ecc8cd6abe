package nomad

import (
	"errors"
	"fmt"
	"github.com/nomadfork/nomad/nomad/transport"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/nomad/evalbroker"
	"github.com/nomadfork/nomad/structs"
)

// Config configures a server.
type Config struct {
	NodeName   string
	NodeID     string
	Region     string
	Datacenter string
	// DataDir holds the Raft log (raft-wal) and snapshots. Empty keeps everything in memory.
	DataDir string
	// RaftSegmentSize is the size raft-wal allocates each log segment with; 0 is raft-wal's
	// default (64 MiB). Tests lower it to get several segments from a few writes.
	RaftSegmentSize int
	// RaftBindAddr is where the Raft transport listens (the RPC address). Empty with
	// BootstrapExpect <= 1 uses an in-memory transport.
	RaftBindAddr      string
	RaftAdvertiseAddr string
	BootstrapExpect   int
	// SerfBindAddr is where gossip listens (ports.serf, TCP and UDP); empty runs no gossip,
	// as a lone server needs none. SerfAdvertiseAddr is what the others are told.
	SerfBindAddr      string
	SerfAdvertiseAddr string
	// RetryJoin lists the serf (gossip) addresses of other servers to join.
	RetryJoin []string
	// RetryInterval is the wait between retry_join attempts (0: half a second);
	// RetryMaxAttempts > 0 gives up after that many.
	RetryInterval    time.Duration
	RetryMaxAttempts int
	// Build is the version this server gossips in its "build" tag.
	Build string
	// EncryptKey is `server { encrypt }`: base64 of 16, 24 or 32 bytes. Servers prove it to
	// each other before any Raft or server RPC is read; without it (and without TLS) a server
	// accepts no server connection, and one configured to join others refuses to start.
	EncryptKey string
	// TLS is tls { rpc = true }: nil leaves the RPC port to the cluster key alone. With it,
	// servers present and require certificates from the CA and need no key to join.
	TLS *transport.TLSConfig
	// RPCMaxConnsPerClient caps the connections one IP address holds on the RPC port before
	// it authenticates as a server (limits.rpc_max_conns_per_client; 0: unlimited).
	// RPCHandshakeTimeout bounds an inbound peer's first byte and handshake
	// (limits.rpc_handshake_timeout; 0: unbounded).
	RPCMaxConnsPerClient int
	RPCHandshakeTimeout  time.Duration

	JobGCInterval  time.Duration
	JobGCThreshold time.Duration
	// NodeGCThreshold is how long a node must have been down before the GC removes it.
	NodeGCThreshold       time.Duration
	EvalGCThreshold       time.Duration
	JobTrackedVersions    int
	PurgeHistoryRetention time.Duration
	// JobMaxCount bounds the sum of a job's group counts: a register, scale or revert above
	// it is refused. Each allocation costs the scheduler, the state and every client.
	JobMaxCount int
	// JobMaxTotalSize bounds the encoded bytes of every stored version of one job together
	// (server.job_max_total_size; 0 is structs.DefaultJobMaxTotalSize): a job is held in
	// memory once per version, and in every snapshot.
	JobMaxTotalSize int64
	// SchedulerAlgorithm is how the scheduler ranks nodes that fit: "binpack" (fill the
	// busiest; the default when empty) or "spread" (prefer the emptiest).
	SchedulerAlgorithm string
	// PreemptionConfig is default_scheduler_config's preemption_config, the configuration
	// answered until one is stored: which job types may preempt lower-priority allocations
	// (upstream's default: system jobs only).
	PreemptionConfig structs.PreemptionConfig

	ACLEnabled bool
	// ACLTokenMin/MaxExpirationTTL bound ExpirationTTL of created tokens.
	ACLTokenMinExpirationTTL time.Duration
	ACLTokenMaxExpirationTTL time.Duration

	EnableEventBroker bool
	EventBufferSize   int64

	// ReapInterval is how often the leader removes expired tokens and purge records past
	// retention.
	ReapInterval time.Duration

	// NumSchedulers is how many scheduling workers the leader runs in parallel, each taking
	// evaluations from the evaluation broker and planning on its own snapshot; the plan
	// applier serialises their plans against the latest state. 0 leaves evaluations pending
	// (tests that look at state without a scheduler writing beside them).
	NumSchedulers int

	// EvalBroker tunes the evaluation broker (delivery limit, nack timeout and delays); zero
	// values take upstream's defaults.
	EvalBroker evalbroker.Config
	// EvalFailedFollowupDelay is the least time after which an evaluation that reached the
	// delivery limit is tried again by its follow-up (default 1m; up to five times as much
	// again is added at random, as upstream, so that failed evaluations do not return at once).
	EvalFailedFollowupDelay time.Duration

	// MinHeartbeatTTL is the heartbeat interval clients are given; HeartbeatGrace is added
	// before the leader marks a silent node down.
	MinHeartbeatTTL time.Duration
	HeartbeatGrace  time.Duration

	// ClientIntroduction is server.client_introduction: how strictly a node the cluster does
	// not know must be introduced, and the lifetimes of introduction tokens.
	ClientIntroduction ClientIntroductionConfig

	// RaftSnapshotThreshold (entries since the last snapshot), RaftSnapshotInterval (how often
	// Raft checks it) and RaftTrailingLogs (entries kept behind a snapshot, so a follower that
	// lags less than that catches up from the log instead of an InstallSnapshot); 0 takes
	// setupRaft's defaults. Small values make snapshots and InstallSnapshot frequent, which
	// the Jepsen-style suite uses to restart servers while they happen.
	RaftSnapshotThreshold uint64
	RaftSnapshotInterval  time.Duration
	RaftTrailingLogs      uint64
	// FastRaft shortens Raft timeouts; for dev agents and tests on one machine.
	FastRaft bool
	// raftPipelining turns Raft's pipelined replication back on (see unpipelinedTransport).
	// Only BenchmarkReplicatedWrites sets it, to measure what turning it off costs.
	raftPipelining bool

	Logger hclog.Logger
}

// DefaultJobMaxCount is server.job_max_count when not set (or set to 0).
const DefaultJobMaxCount = 50000

// DefaultConfig returns upstream's defaults.
func DefaultConfig() *Config {
	return &Config{
		NodeName:                 "nomad",
		Region:                   "global",
		Datacenter:               "dc1",
		BootstrapExpect:          1,
		Build:                    "0.1.0-fork",
		JobGCInterval:            5 * time.Minute,
		JobGCThreshold:           4 * time.Hour,
		NodeGCThreshold:          24 * time.Hour,
		EvalGCThreshold:          time.Hour,
		JobTrackedVersions:       6,
		JobMaxCount:              DefaultJobMaxCount,
		RPCMaxConnsPerClient:     100,
		RPCHandshakeTimeout:      5 * time.Second,
		PurgeHistoryRetention:    720 * time.Hour,
		ACLTokenMinExpirationTTL: time.Minute,
		ACLTokenMaxExpirationTTL: 24 * time.Hour * 365,
		EnableEventBroker:        true,
		EventBufferSize:          100,
		NumSchedulers:            1,
		MinHeartbeatTTL:          10 * time.Second,
		HeartbeatGrace:           10 * time.Second,
		PreemptionConfig:         structs.PreemptionConfig{SystemSchedulerEnabled: true},
		ClientIntroduction: ClientIntroductionConfig{
			Enforcement:        structs.NodeIntroductionEnforcementWarn,
			DefaultIdentityTTL: structs.DefaultIntroductionTokenTTL,
			MaxIdentityTTL:     structs.MaxIntroductionTokenTTL,
		},
	}
}

// ClientIntroductionConfig is server.client_introduction, with upstream's names and defaults.
type ClientIntroductionConfig struct {
	// Enforcement is none, warn (the default, so that existing clients keep joining while
	// operators hand out tokens) or strict. Plain client connections under rpc_upgrade_mode
	// are held to strict whatever it says.
	Enforcement string
	// DefaultIdentityTTL is the lifetime of a token whose request names none.
	DefaultIdentityTTL time.Duration
	// MaxIdentityTTL bounds the lifetime a request may ask for.
	MaxIdentityTTL time.Duration
}

// withDefaults fills what a Config built without DefaultConfig leaves empty.
func (c ClientIntroductionConfig) withDefaults() ClientIntroductionConfig {
	if c.Enforcement == "" {
		c.Enforcement = structs.NodeIntroductionEnforcementWarn
	}
	if c.DefaultIdentityTTL == 0 {
		c.DefaultIdentityTTL = structs.DefaultIntroductionTokenTTL
	}
	if c.MaxIdentityTTL == 0 {
		c.MaxIdentityTTL = max(structs.MaxIntroductionTokenTTL, c.DefaultIdentityTTL)
	}
	return c
}

// Validate reports the first setting that cannot work, by its configuration name.
func (c ClientIntroductionConfig) Validate() error {
	switch {
	case !structs.ValidNodeIntroductionEnforcement(c.Enforcement):
		return fmt.Errorf("client_introduction.enforcement: %q is not one of none, warn, strict", c.Enforcement)
	case c.DefaultIdentityTTL <= 0:
		return errors.New("client_introduction.default_identity_ttl must be greater than 0")
	case c.MaxIdentityTTL <= 0:
		return errors.New("client_introduction.max_identity_ttl must be greater than 0")
	case c.MaxIdentityTTL < c.DefaultIdentityTTL:
		return errors.New("client_introduction.max_identity_ttl must be at least default_identity_ttl")
	}
	return nil
}
