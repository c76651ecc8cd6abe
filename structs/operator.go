package structs

import "time"

// RaftServer is one server of the Raft configuration, in upstream's wire names.
type RaftServer struct {
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// RaftConfigurationRequest reads the Raft configuration.
type RaftConfigurationRequest struct {
	QueryOptions
}

// RaftConfigurationResponse is the Raft configuration at Index.
type RaftConfigurationResponse struct {
	Servers []*RaftServer
	Index   uint64
}

// RaftPeerRequest removes one server from the Raft configuration, by ID or by address
// (exactly one of the two).
type RaftPeerRequest struct {
	ID      string
	Address string
	WriteRequest
}

// RaftStats is what a server reports of its own log for the leader's health view.
type RaftStats struct {
	LastContact time.Duration
	LastTerm    uint64
	LastIndex   uint64
	// DataDirFreeBytes is the free space under the server's data_dir (0 without one), and
	// DiskWarning a sentence when it is low or writes are refused for it ("" otherwise).
	DataDirFreeBytes uint64
	DiskWarning      string
}

// ServerHealth is one server's health as the leader sees it.
type ServerHealth struct {
	ID          string
	Name        string
	Address     string
	SerfStatus  string
	Version     string
	Leader      bool
	LastContact time.Duration
	LastTerm    uint64
	LastIndex   uint64
	Healthy     bool
	Voter       bool
	StableSince time.Time
	// DataDirFreeBytes and DiskWarning are the server's RaftStats fields of the same names.
	DataDirFreeBytes uint64
	DiskWarning      string
}

// OperatorHealthRequest reads the servers' health.
type OperatorHealthRequest struct {
	QueryOptions
}

// OperatorHealthReply is the cluster's health: every server's, whether all are healthy and
// how many voters could fail without losing the quorum.
type OperatorHealthReply struct {
	Healthy          bool
	FailureTolerance int
	Servers          []ServerHealth
	Leader           string
	Voters           []string
}
