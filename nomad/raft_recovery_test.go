package nomad

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// A data dir whose Raft configuration names a voter that will never answer (the fake voter of
// finding 2) cannot elect a leader again; peers.json brings it back with every write kept.
func TestSecurity_PeersJSONHealsAConfigurationWithAFakeVoter(t *testing.T) {
	dataDir := t.TempDir()
	addr := freeAddr(t)
	config := func() *Config {
		cfg := DefaultConfig()
		cfg.FastRaft = true
		cfg.DataDir = dataDir
		cfg.RaftBindAddr = addr
		cfg.NumSchedulers = 0
		return cfg
	}
	srv, err := NewServer(config())
	must.NoError(t, err)
	waitFor(t, 10*time.Second, srv.LeaderReady)
	var reply structs.JobRegisterResponse
	must.NoError(t, srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: mock.Job(),
		WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &reply))
	must.NoError(t, srv.AddPeer("fake-voter", "127.0.0.1:1"))
	id := srv.config.NodeID
	must.NoError(t, srv.Shutdown())

	// Restarted as it is, the server is one of two voters and the other never answers.
	srv, err = NewServer(config())
	must.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	must.Error(t, srv.WaitForLeader(ctx))
	must.NoError(t, srv.Shutdown())

	peers, err := json.Marshal([]map[string]any{{"id": id, "address": addr, "non_voter": false}})
	must.NoError(t, err)
	peersPath := filepath.Join(dataDir, "server", "raft", "peers.json")
	must.NoError(t, os.WriteFile(peersPath, peers, 0o600))

	srv, err = NewServer(config())
	must.NoError(t, err)
	t.Cleanup(func() { _ = srv.Shutdown() })
	waitFor(t, 10*time.Second, srv.LeaderReady)
	got, err := srv.Peers()
	must.NoError(t, err)
	must.Eq(t, []string{addr}, got)
	job, err := srv.State().JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.NotNil(t, job)
	_, err = os.Stat(peersPath)
	must.True(t, os.IsNotExist(err))
}

func TestPeersJSON_BadFileIsAClearError(t *testing.T) {
	dataDir := t.TempDir()
	cfg := DefaultConfig()
	cfg.DataDir = dataDir
	cfg.RaftBindAddr = freeAddr(t)
	srv, err := NewServer(cfg)
	must.NoError(t, err)
	must.NoError(t, srv.Shutdown())
	path := filepath.Join(dataDir, "server", "raft", "peers.json")
	must.NoError(t, os.WriteFile(path, []byte("not json"), 0o600))
	_, err = NewServer(cfg)
	must.ErrorContains(t, err, "reading the recovery configuration "+path)
	// The failed start released the log's lock: a corrected file is applied at once.
	must.NoError(t, os.Remove(path))
	srv, err = NewServer(cfg)
	must.NoError(t, err)
	must.NoError(t, srv.Shutdown())
}
