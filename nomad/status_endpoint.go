package nomad

// Status answers leader and peer questions; these need no token, as upstream.
type Status struct {
	srv *Server
}

// Leader returns the leader's RPC address.
func (s *Status) Leader() string { return s.srv.Leader() }

// Peers returns the Raft peers.
func (s *Status) Peers() ([]string, error) { return s.srv.Peers() }
