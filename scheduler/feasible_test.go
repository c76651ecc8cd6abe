package scheduler

import (
	"fmt"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// resNode is a ready raw_exec node with cpu MHz and mem MB.
func resNode(id string, cpu, mem int64) *structs.Node {
	n := node(id, "dc1", "raw_exec")
	n.Attributes = map[string]string{"kernel.name": "linux", "unique.hostname": id}
	n.NodeResources = &structs.NodeResources{NodeResources: api.NodeResources{
		Cpu:    api.NodeCpuResources{CpuShares: cpu, TotalCpuCores: 4},
		Memory: api.NodeMemoryResources{MemoryMB: mem},
		Disk:   api.NodeDiskResources{DiskMB: 10000},
	}}
	return n
}

// sized is testJob with each allocation asking cpu MHz and mem MB.
func sized(count, cpu, mem int) *structs.Job {
	j := testJob(structs.JobTypeService, count, "raw_exec")
	j.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(cpu), MemoryMB: new(mem)}
	return j
}

func placedOn(p *Plan) map[string]int {
	out := map[string]int{}
	for _, a := range p.Place {
		out[a.NodeID]++
	}
	return out
}

// TestFeasible_MemoryExhausted is the example: 4 allocations of 40% of the node's
// memory place 2; the other 2 are queued, exhausted by memory.
func TestFeasible_MemoryExhausted(t *testing.T) {
	p := Compute(Input{Job: sized(4, 100, 400), Nodes: []*structs.Node{resNode("n1", 4000, 1000)}})
	must.Len(t, 2, p.Place)
	must.Eq(t, 2, p.Queued["web"])
	m := p.Failed["web"]
	must.NotNil(t, m)
	must.Eq(t, 1, m.NodesEvaluated)
	must.Eq(t, 1, m.NodesExhausted)
	must.Eq(t, map[string]int{"memory": 1}, m.DimensionExhausted)
	must.Eq(t, 1, m.CoalescedFailures)
	must.Eq(t, map[string]int{"dc1": 1}, m.NodesAvailable)

	a := p.Place[0]
	must.Eq(t, int64(400), a.AllocatedResources.Tasks["server"].Memory.MemoryMB)
	must.Eq(t, int64(100), a.AllocatedResources.Tasks["server"].Cpu.CpuShares)
	must.Eq(t, int64(structs.DefaultDiskMB), a.AllocatedResources.Shared.DiskMB)
}

// TestFeasible_CountsExistingAllocations: what other jobs' allocations use on a node is not
// offered again, and what this plan stops is.
func TestFeasible_CountsExistingAllocations(t *testing.T) {
	other := sized(1, 100, 700)
	other.ID = "other"
	busy := alloc(other, 0, "n1", structs.AllocClientStatusRunning)
	busy.JobID = "other"
	nodes := []*structs.Node{resNode("n1", 4000, 1000), resNode("n2", 4000, 1000)}
	p := Compute(Input{Job: sized(2, 100, 400), Nodes: nodes, NodeAllocs: map[string][]*structs.Allocation{"n1": {busy}}})
	must.Eq(t, map[string]int{"n2": 2}, placedOn(p))

	// A destructive update frees its old allocation's memory for the replacement.
	v0 := sized(1, 100, 900)
	old := alloc(v0, 0, "n1", structs.AllocClientStatusRunning)
	v1 := nextVersion(v0, 1, true)
	p = Compute(Input{Job: v1, Nodes: nodes[:1], Allocs: []*structs.Allocation{old},
		NodeAllocs: map[string][]*structs.Allocation{"n1": {old}}})
	must.Len(t, 1, p.Stop)
	must.Eq(t, map[string]int{"n1": 1}, placedOn(p))
}

func TestFeasible_Dimensions(t *testing.T) {
	withDisk := func(mb int) *structs.Job {
		j := sized(1, 100, 100)
		j.TaskGroups[0].EphemeralDisk = &api.EphemeralDisk{SizeMB: new(mb)}
		return j
	}
	reserved := resNode("n1", 4000, 1000)
	reserved.ReservedResources = &api.NodeReservedResources{Memory: api.NodeReservedMemoryResources{MemoryMB: 950}}
	cases := []struct {
		name string
		job  *structs.Job
		node *structs.Node
		want string
	}{
		{name: "cpu", job: sized(1, 5000, 100), node: resNode("n1", 4000, 1000), want: "cpu"},
		{name: "memory", job: sized(1, 100, 2000), node: resNode("n1", 4000, 1000), want: "memory"},
		{name: "reserved memory", job: sized(1, 100, 100), node: reserved, want: "memory"},
		{name: "disk", job: withDisk(20000), node: resNode("n1", 4000, 1000), want: "disk"},
		{name: "cores", job: func() *structs.Job {
			j := sized(1, 100, 100)
			j.TaskGroups[0].Tasks[0].Resources = &api.Resources{Cores: new(5), MemoryMB: new(100)}
			return j
		}(), node: resNode("n1", 40000, 1000), want: "cores"},
		{name: "memory_max is not counted", job: func() *structs.Job {
			j := sized(1, 100, 100)
			j.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB = new(5000)
			return j
		}(), node: resNode("n1", 4000, 1000)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(Input{Job: tc.job, Nodes: []*structs.Node{tc.node}})
			if tc.want == "" {
				must.Len(t, 1, p.Place)
				return
			}
			must.Len(t, 0, p.Place)
			must.Eq(t, map[string]int{tc.want: 1}, p.Failed["web"].DimensionExhausted)
		})
	}
}

// TestFeasible_NodesWithoutResources: a node that reported no resources is not refused
// anything (it predates fingerprinting), as before resources were counted.
func TestFeasible_NodesWithoutResources(t *testing.T) {
	p := Compute(Input{Job: sized(3, 100000, 100000), Nodes: []*structs.Node{node("n1", "dc1", "raw_exec")}})
	must.Len(t, 3, p.Place)
}

func withPorts(job *structs.Job, static []api.Port, dynamic []api.Port) *structs.Job {
	job.TaskGroups[0].Networks = []*api.NetworkResource{{ReservedPorts: static, DynamicPorts: dynamic}}
	return job
}

func TestFeasible_Ports(t *testing.T) {
	t.Run("static ports never collide", func(t *testing.T) {
		job := withPorts(sized(3, 100, 100), []api.Port{{Label: "http", Value: 8080}}, nil)
		p := Compute(Input{Job: job, Nodes: []*structs.Node{resNode("n1", 4000, 4000), resNode("n2", 4000, 4000)}})
		must.Eq(t, map[string]int{"n1": 1, "n2": 1}, placedOn(p))
		must.Eq(t, 1, p.Queued["web"])
		must.Eq(t, map[string]int{"network: reserved port collision http=8080": 2}, p.Failed["web"].DimensionExhausted)
		must.Eq(t, []api.PortMapping{{Label: "http", Value: 8080}}, p.Place[0].AllocatedResources.Shared.Ports)
	})
	t.Run("reserved host ports", func(t *testing.T) {
		n := resNode("n1", 4000, 4000)
		n.ReservedResources = &api.NodeReservedResources{Networks: api.NodeReservedNetworkResources{ReservedHostPorts: "22,8000-8100"}}
		job := withPorts(sized(1, 100, 100), []api.Port{{Label: "http", Value: 8080}}, nil)
		p := Compute(Input{Job: job, Nodes: []*structs.Node{n}})
		must.Len(t, 0, p.Place)
	})
	t.Run("existing allocation's port", func(t *testing.T) {
		other := &structs.Allocation{ID: "x", NodeID: "n1", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
			AllocatedResources: &api.AllocatedResources{Shared: api.AllocatedSharedResources{Ports: []api.PortMapping{{Label: "db", Value: 5432}}}}}
		job := withPorts(sized(1, 100, 100), []api.Port{{Label: "pg", Value: 5432}}, nil)
		p := Compute(Input{Job: job, Nodes: []*structs.Node{resNode("n1", 4000, 4000)}, NodeAllocs: map[string][]*structs.Allocation{"n1": {other}}})
		must.Len(t, 0, p.Place)
		must.Eq(t, map[string]int{"network: reserved port collision pg=5432": 1}, p.Failed["web"].DimensionExhausted)
	})
	t.Run("dynamic ports are distinct and in range", func(t *testing.T) {
		n := resNode("n1", 40000, 40000)
		n.NodeResources.MinDynamicPort, n.NodeResources.MaxDynamicPort = 30000, 30004
		n.ReservedResources = &api.NodeReservedResources{Networks: api.NodeReservedNetworkResources{ReservedHostPorts: "30001"}}
		job := withPorts(sized(3, 100, 100), nil, []api.Port{{Label: "http"}, {Label: "admin"}})
		p := Compute(Input{Job: job, Nodes: []*structs.Node{n}})
		must.Len(t, 2, p.Place, must.Sprint("4 free ports, 2 per allocation"))
		seen := map[int]bool{}
		for _, a := range p.Place {
			for _, pm := range a.AllocatedResources.Shared.Ports {
				must.False(t, seen[pm.Value], must.Sprintf("port %d given twice", pm.Value))
				must.NotEq(t, 30001, pm.Value)
				must.Between(t, 30000, pm.Value, 30004)
				seen[pm.Value] = true
			}
		}
		must.Eq(t, map[string]int{"network: dynamic port selection failed": 1}, p.Failed["web"].DimensionExhausted)
	})
}

func constrained(c ...*api.Constraint) *structs.Job {
	j := sized(1, 100, 100)
	j.Constraints = c
	return j
}

// TestFeasible_ConstraintFiltered is the example: a job for plan9 places nothing on
// Linux, and the metrics name the constraint.
func TestFeasible_ConstraintFiltered(t *testing.T) {
	c := &api.Constraint{LTarget: "${attr.kernel.name}", RTarget: "plan9", Operand: "="}
	p := Compute(Input{Job: constrained(c), Nodes: []*structs.Node{resNode("n1", 4000, 4000), resNode("n2", 4000, 4000)}})
	must.Len(t, 0, p.Place)
	m := p.Failed["web"]
	must.Eq(t, 2, m.NodesEvaluated)
	must.Eq(t, 2, m.NodesFiltered)
	must.Eq(t, map[string]int{"${attr.kernel.name} = plan9": 2}, m.ConstraintFiltered)
}

func TestFeasible_ConstraintLevels(t *testing.T) {
	nodes := []*structs.Node{resNode("n1", 4000, 4000), resNode("n2", 4000, 4000)}
	nodes[1].Meta = map[string]string{"rack": "r2"}
	nodes[1].NodeClass = "big"
	rack := &api.Constraint{LTarget: "${meta.rack}", RTarget: "r2", Operand: "="}
	cases := []struct {
		name string
		set  func(j *structs.Job)
	}{
		{name: "job", set: func(j *structs.Job) { j.Constraints = []*api.Constraint{rack} }},
		{name: "group", set: func(j *structs.Job) { j.TaskGroups[0].Constraints = []*api.Constraint{rack} }},
		{name: "task", set: func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Constraints = []*api.Constraint{rack} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := sized(2, 100, 100)
			tc.set(j)
			p := Compute(Input{Job: j, Nodes: nodes})
			must.Eq(t, map[string]int{"n2": 2}, placedOn(p))
			must.Eq(t, 1, p.Place[0].Metrics.NodesFiltered)
		})
	}
}

func TestFeasible_DistinctHosts(t *testing.T) {
	nodes := []*structs.Node{resNode("n1", 4000, 4000), resNode("n2", 4000, 4000)}
	job := sized(3, 100, 100)
	job.TaskGroups[0].Constraints = []*api.Constraint{{Operand: "distinct_hosts", RTarget: "true"}}
	p := Compute(Input{Job: job, Nodes: nodes})
	must.Eq(t, map[string]int{"n1": 1, "n2": 1}, placedOn(p))
	must.Eq(t, 1, p.Queued["web"])
	must.Eq(t, map[string]int{" distinct_hosts true": 2}, p.Failed["web"].ConstraintFiltered)

	// An existing allocation of the job counts too.
	existing := alloc(job, 0, "n1", structs.AllocClientStatusRunning)
	p = Compute(Input{Job: job, Nodes: nodes, Allocs: []*structs.Allocation{existing}})
	must.Eq(t, map[string]int{"n2": 1}, placedOn(p))
}

func TestFeasible_DistinctProperty(t *testing.T) {
	var nodes []*structs.Node
	for i := range 6 {
		n := resNode(fmt.Sprintf("n%d", i), 4000, 4000)
		n.Meta = map[string]string{"rack": fmt.Sprintf("r%d", i%2)}
		nodes = append(nodes, n)
	}
	job := sized(5, 100, 100)
	job.Constraints = []*api.Constraint{{Operand: "distinct_property", LTarget: "${meta.rack}", RTarget: "2"}}
	p := Compute(Input{Job: job, Nodes: nodes})
	must.Len(t, 4, p.Place, must.Sprint("two racks, two allocations each"))
	perRack := map[string]int{}
	for _, a := range p.Place {
		for _, n := range nodes {
			if n.ID == a.NodeID {
				perRack[n.Meta["rack"]]++
			}
		}
	}
	must.Eq(t, map[string]int{"r0": 2, "r1": 2}, perRack)
	must.Eq(t, 1, p.Queued["web"])
}

func TestFeasible_EligibilityAndPool(t *testing.T) {
	ineligible := resNode("n1", 4000, 4000)
	ineligible.SchedulingEligibility = structs.NodeSchedulingIneligible
	draining := resNode("n2", 4000, 4000)
	draining.Drain = true
	otherPool := resNode("n3", 4000, 4000)
	otherPool.NodePool = "gpu"
	unhealthy := resNode("n4", 4000, 4000)
	unhealthy.Drivers["raw_exec"].Healthy = false
	good := resNode("n5", 4000, 4000)
	p := Compute(Input{Job: sized(2, 100, 100), Nodes: []*structs.Node{ineligible, draining, otherPool, unhealthy, good}})
	must.Eq(t, map[string]int{"n5": 2}, placedOn(p))
	m := p.Place[0].Metrics
	must.Eq(t, 2, m.NodesEvaluated, must.Sprint("only n4 and n5 are ready, eligible and in the pool"))
	must.Eq(t, map[string]int{"missing drivers": 1}, m.ConstraintFiltered)
	must.Eq(t, map[string]int{"dc1": 3}, m.NodesAvailable, must.Sprint("ready, eligible and not draining, any pool"))
	must.Eq(t, 2, m.NodesInPool)
}

// TestFeasible_SystemJobExhausted: a system job's allocation that does not fit its node is
// queued with the dimension, and the other nodes still get theirs.
func TestFeasible_SystemJobExhausted(t *testing.T) {
	job := sized(1, 100, 800)
	job.Type = structs.JobTypeSystem
	small := resNode("n1", 4000, 500)
	p := Compute(Input{Job: job, Nodes: []*structs.Node{small, resNode("n2", 4000, 1000)}})
	must.Eq(t, map[string]int{"n2": 1}, placedOn(p))
	must.Eq(t, 1, p.Queued["web"])
	must.Eq(t, map[string]int{"memory": 1}, p.Failed["web"].DimensionExhausted)
}

// A task that asks for a device is placed only on a node with enough healthy instances of
// it; elsewhere the failure names the missing devices.
func TestFeasible_Devices(t *testing.T) {
	gpuNode := func(id string, healthy ...bool) *structs.Node {
		n := resNode(id, 4000, 4000)
		d := &api.NodeDeviceResource{Vendor: "nvidia", Type: "gpu", Name: "T4"}
		for i, h := range healthy {
			d.Instances = append(d.Instances, &api.NodeDevice{ID: fmt.Sprintf("%s-%d", id, i), Healthy: h})
		}
		n.NodeResources.Devices = []*api.NodeDeviceResource{d}
		return n
	}
	cases := []struct {
		name      string
		request   api.RequestedDevice
		nodes     []*structs.Node
		wantPlace string // node placed on, "" when none
	}{
		{name: "no node has devices", request: api.RequestedDevice{Name: "nvidia/gpu"},
			nodes: []*structs.Node{resNode("plain", 4000, 4000)}},
		{name: "by type", request: api.RequestedDevice{Name: "gpu"},
			nodes: []*structs.Node{resNode("plain", 4000, 4000), gpuNode("g", true)}, wantPlace: "g"},
		{name: "by vendor/type/name", request: api.RequestedDevice{Name: "nvidia/gpu/T4", Count: new(uint64(2))},
			nodes: []*structs.Node{gpuNode("one", true), gpuNode("two", true, true)}, wantPlace: "two"},
		{name: "unhealthy instances do not count", request: api.RequestedDevice{Name: "nvidia/gpu", Count: new(uint64(2))},
			nodes: []*structs.Node{gpuNode("half", true, false)}},
		{name: "another model", request: api.RequestedDevice{Name: "nvidia/gpu/A100"},
			nodes: []*structs.Node{gpuNode("g", true)}},
		{name: "device constraints are not evaluated, so nothing qualifies",
			request: api.RequestedDevice{Name: "gpu", Constraints: []*api.Constraint{{LTarget: "${device.attr.memory}", RTarget: "16 GiB", Operand: ">="}}},
			nodes:   []*structs.Node{gpuNode("g", true)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := sized(1, 100, 100)
			req := tc.request
			j.TaskGroups[0].Tasks[0].Resources.Devices = []*api.RequestedDevice{&req}
			p := Compute(Input{Job: j, Nodes: tc.nodes})
			if tc.wantPlace != "" {
				must.Eq(t, map[string]int{tc.wantPlace: 1}, placedOn(p))
				return
			}
			must.Len(t, 0, p.Place)
			must.Positive(t, p.Failed["web"].ConstraintFiltered["missing devices"])
		})
	}
}

// A group that asks for a host volume is placed only on a node that has it (by source), and
// writable when the request is; elsewhere the failure names the missing volumes. A CSI
// volume fits no node here.
func TestFeasible_HostVolumes(t *testing.T) {
	withVolumes := func(id string, vols map[string]*api.HostVolumeInfo) *structs.Node {
		n := resNode(id, 4000, 4000)
		n.HostVolumes = vols
		return n
	}
	cases := []struct {
		name      string
		request   api.VolumeRequest
		nodes     []*structs.Node
		wantPlace string
	}{
		{name: "only the node with the volume", request: api.VolumeRequest{Type: "host", Source: "data"},
			nodes: []*structs.Node{resNode("plain", 4000, 4000), withVolumes("has", map[string]*api.HostVolumeInfo{"data": {Path: "/srv/data"}})}, wantPlace: "has"},
		{name: "no node has it", request: api.VolumeRequest{Type: "host", Source: "data"},
			nodes: []*structs.Node{withVolumes("other", map[string]*api.HostVolumeInfo{"logs": {Path: "/srv/logs"}})}},
		{name: "a read-only volume does not serve a writer", request: api.VolumeRequest{Type: "host", Source: "data"},
			nodes: []*structs.Node{withVolumes("ro", map[string]*api.HostVolumeInfo{"data": {Path: "/srv/data", ReadOnly: true}})}},
		{name: "a read-only volume serves a reader", request: api.VolumeRequest{Type: "host", Source: "data", ReadOnly: true},
			nodes: []*structs.Node{withVolumes("ro", map[string]*api.HostVolumeInfo{"data": {Path: "/srv/data", ReadOnly: true}})}, wantPlace: "ro"},
		{name: "csi fits nowhere", request: api.VolumeRequest{Type: "csi", Source: "data"},
			nodes: []*structs.Node{withVolumes("has", map[string]*api.HostVolumeInfo{"data": {Path: "/srv/data"}})}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := sized(1, 100, 100)
			req := tc.request
			j.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"v": &req}
			p := Compute(Input{Job: j, Nodes: tc.nodes})
			if tc.wantPlace != "" {
				must.Eq(t, map[string]int{tc.wantPlace: 1}, placedOn(p))
				return
			}
			must.Len(t, 0, p.Place)
			must.Positive(t, p.Failed["web"].ConstraintFiltered["missing compatible host volumes"])
		})
	}
}

// A group in bridge mode is placed only on a node that fingerprinted a bridge network; with
// none, the failure names it. A group in host mode goes anywhere.
func TestFeasible_BridgeNetwork(t *testing.T) {
	withBridge := resNode("bridge", 4000, 4000)
	withBridge.NodeResources.Networks = append(withBridge.NodeResources.Networks, &api.NetworkResource{Mode: "bridge", Device: "nomad"})
	bridged := func() *structs.Job {
		j := sized(1, 100, 100)
		j.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "bridge", DynamicPorts: []api.Port{{Label: "http", To: 8080}}}}
		return j
	}

	p := Compute(Input{Job: bridged(), Nodes: []*structs.Node{resNode("plain", 4000, 4000), withBridge}})
	must.Eq(t, map[string]int{"bridge": 1}, placedOn(p))

	p = Compute(Input{Job: bridged(), Nodes: []*structs.Node{resNode("plain", 4000, 4000)}})
	must.Len(t, 0, p.Place)
	must.Eq(t, map[string]int{"missing network: bridge": 1}, p.Failed["web"].ConstraintFiltered)

	host := sized(1, 100, 100)
	host.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "host"}}
	p = Compute(Input{Job: host, Nodes: []*structs.Node{resNode("plain", 4000, 4000)}})
	must.Eq(t, map[string]int{"plain": 1}, placedOn(p))
}
