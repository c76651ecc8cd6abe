// Package mock builds valid objects for tests.
package mock

import (
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Job returns a canonical, valid service job "web" with one group of one raw_exec task.
func Job() *structs.Job {
	return JobWithID("web")
}

// JobWithID returns Job with another ID.
func JobWithID(id string) *structs.Job {
	in := &api.Job{
		ID:          &id,
		Name:        &id,
		Type:        new("service"),
		Datacenters: []string{"dc1"},
		Meta:        map[string]string{"owner": "team-a"},
		TaskGroups: []*api.TaskGroup{{
			Name:  new("web"),
			Count: new(1),
			Tasks: []*api.Task{{
				Name:      "server",
				Driver:    "raw_exec",
				Config:    map[string]any{"command": "/bin/sleep", "args": []any{"600"}},
				Resources: &api.Resources{CPU: new(50), MemoryMB: new(32)},
			}},
		}},
	}
	in.Canonicalize()
	j := structs.JobFromAPI(in)
	j.Canonicalize()
	return j
}

// BatchJob returns a batch variant of Job.
func BatchJob(id string) *structs.Job {
	j := JobWithID(id)
	j.Type = structs.JobTypeBatch
	// Canonicalized as a service job, it got the service update defaults; a batch job may not
	// have an update block.
	j.Update = nil
	for _, tg := range j.TaskGroups {
		tg.Update = nil
	}
	return j
}

// Node returns a ready, eligible node in dc1 that offers raw_exec and the mock driver.
func Node(id string) *structs.Node {
	return &structs.Node{
		ID: id, SecretID: "secret-" + id, Name: "node-" + id, Datacenter: "dc1",
		NodePool:              structs.DefaultNodePool,
		Status:                structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Drivers: map[string]*structs.DriverInfo{
			"raw_exec":    {Detected: true, Healthy: true},
			"mock_driver": {Detected: true, Healthy: true},
		},
	}
}
