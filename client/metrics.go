package client

import (
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadfork/nomad/structs"
)

// clientMetricsInterval is how often the client publishes its gauges: upstream's default
// collection interval.
const clientMetricsInterval = time.Second

// runMetrics publishes the client's gauges until the client shuts down, under upstream's
// names: nomad.client.allocations.* always; the host's memory, CPU, disk and uptime when
// PublishNodeMetrics is set; each running task's memory and CPU when
// PublishAllocationMetrics is set.
func (c *Client) runMetrics() {
	defer c.wg.Done()
	tick := time.NewTicker(clientMetricsInterval)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
			c.emitMetrics()
		}
	}
}

func (c *Client) nodeLabels() []metrics.Label {
	return []metrics.Label{
		{Name: "node_id", Value: c.node.ID},
		{Name: "datacenter", Value: c.config.Datacenter},
		{Name: "node_class", Value: c.config.NodeClass},
		{Name: "node_pool", Value: c.config.NodePool},
	}
}

func (c *Client) emitMetrics() {
	labels := c.nodeLabels()
	counts := c.allocationCounts()
	for _, name := range []string{"pending", "running", "blocked", "migrating", "terminal"} {
		metrics.SetGaugeWithLabels([]string{"client", "allocations", name}, float32(counts[name]), labels)
	}
	if c.config.PublishNodeMetrics {
		c.emitHostMetrics(labels)
	}
	if c.config.PublishAllocationMetrics {
		c.emitAllocMetrics()
	}
}

// allocationCounts counts the allocations this client runs by upstream's gauges: pending
// (not yet running), running, terminal (finished, kept until the servers forget them).
// blocked and migrating stay 0: no allocation here waits on a previous one's data.
func (c *Client) allocationCounts() map[string]int {
	c.mu.Lock()
	runners := make([]*allocRunner, 0, len(c.runners))
	for _, r := range c.runners {
		runners = append(runners, r)
	}
	c.mu.Unlock()
	counts := map[string]int{}
	for _, r := range runners {
		r.mu.Lock()
		status := structs.AllocClientStatusPending
		if len(r.states) > 0 {
			status, _ = clientStatus(r.states)
		}
		r.mu.Unlock()
		switch status {
		case structs.AllocClientStatusRunning:
			counts["running"]++
		case structs.AllocClientStatusPending:
			counts["pending"]++
		default:
			counts["terminal"]++
		}
	}
	return counts
}

func (c *Client) emitHostMetrics(labels []metrics.Label) {
	host, err := c.HostStats()
	if err != nil {
		return
	}
	if m := host.Memory; m != nil {
		metrics.SetGaugeWithLabels([]string{"client", "host", "memory", "total"}, float32(m.Total), labels)
		metrics.SetGaugeWithLabels([]string{"client", "host", "memory", "available"}, float32(m.Available), labels)
		metrics.SetGaugeWithLabels([]string{"client", "host", "memory", "used"}, float32(m.Used), labels)
		metrics.SetGaugeWithLabels([]string{"client", "host", "memory", "free"}, float32(m.Free), labels)
	}
	for _, cpu := range host.CPU {
		cpuLabels := append(append([]metrics.Label(nil), labels...), metrics.Label{Name: "cpu", Value: cpu.CPU})
		metrics.SetGaugeWithLabels([]string{"client", "host", "cpu", "user"}, float32(cpu.User), cpuLabels)
		metrics.SetGaugeWithLabels([]string{"client", "host", "cpu", "system"}, float32(cpu.System), cpuLabels)
		metrics.SetGaugeWithLabels([]string{"client", "host", "cpu", "idle"}, float32(cpu.Idle), cpuLabels)
		metrics.SetGaugeWithLabels([]string{"client", "host", "cpu", "total"}, float32(cpu.User+cpu.System), cpuLabels)
	}
	for _, d := range host.DiskStats {
		diskLabels := append(append([]metrics.Label(nil), labels...), metrics.Label{Name: "disk", Value: d.Device})
		metrics.SetGaugeWithLabels([]string{"client", "host", "disk", "size"}, float32(d.Size), diskLabels)
		metrics.SetGaugeWithLabels([]string{"client", "host", "disk", "used"}, float32(d.Used), diskLabels)
		metrics.SetGaugeWithLabels([]string{"client", "host", "disk", "available"}, float32(d.Available), diskLabels)
		metrics.SetGaugeWithLabels([]string{"client", "host", "disk", "used_percent"}, float32(d.UsedPercent), diskLabels)
	}
	metrics.SetGaugeWithLabels([]string{"client", "uptime"}, float32(host.Uptime), labels)
}

func (c *Client) emitAllocMetrics() {
	c.mu.Lock()
	type target struct {
		id                    string
		namespace, job, group string
	}
	var targets []target
	for id, r := range c.runners {
		r.mu.Lock()
		if a := r.alloc; a != nil {
			targets = append(targets, target{id: id, namespace: a.Namespace, job: a.JobID, group: a.TaskGroup})
		}
		r.mu.Unlock()
	}
	c.mu.Unlock()
	for _, t := range targets {
		usage, err := c.AllocStats(t.id)
		if err != nil || usage == nil {
			continue
		}
		for task, tu := range usage.Tasks {
			if tu == nil || tu.ResourceUsage == nil {
				continue
			}
			labels := []metrics.Label{
				{Name: "alloc_id", Value: t.id}, {Name: "job", Value: t.job}, {Name: "task_group", Value: t.group},
				{Name: "task", Value: task}, {Name: "namespace", Value: t.namespace},
			}
			if m := tu.ResourceUsage.MemoryStats; m != nil {
				metrics.SetGaugeWithLabels([]string{"client", "allocs", "memory", "rss"}, float32(m.RSS), labels)
				metrics.SetGaugeWithLabels([]string{"client", "allocs", "memory", "usage"}, float32(m.Usage), labels)
			}
			if cs := tu.ResourceUsage.CpuStats; cs != nil {
				metrics.SetGaugeWithLabels([]string{"client", "allocs", "cpu", "total_percent"}, float32(cs.Percent), labels)
				metrics.SetGaugeWithLabels([]string{"client", "allocs", "cpu", "total_ticks"}, float32(cs.TotalTicks), labels)
			}
		}
	}
}
