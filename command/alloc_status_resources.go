package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// formatAllocAddresses is the allocation's ports table: each label, whether the port was
// picked by the scheduler, and the host address it listens on; "" when it has no ports.
func formatAllocAddresses(a *api.Allocation) string {
	if a.AllocatedResources == nil {
		return ""
	}
	type addr struct {
		label   string
		dynamic bool
		hostIP  string
		port    int
		to      int
	}
	var addrs []addr
	seen := map[string]bool{}
	for _, n := range a.AllocatedResources.Shared.Networks {
		if n == nil {
			continue
		}
		for _, p := range n.ReservedPorts {
			addrs = append(addrs, addr{p.Label, false, n.IP, p.Value, p.To})
			seen[p.Label] = true
		}
		for _, p := range n.DynamicPorts {
			addrs = append(addrs, addr{p.Label, true, n.IP, p.Value, p.To})
			seen[p.Label] = true
		}
	}
	// Ports carries the same labels on newer clients; only those no network named are added,
	// and then it is unknown whether the scheduler picked them.
	for _, p := range a.AllocatedResources.Shared.Ports {
		if !seen[p.Label] {
			addrs = append(addrs, addr{p.Label, false, p.HostIP, p.Value, p.To})
		}
	}
	if len(addrs) == 0 {
		return ""
	}
	sort.SliceStable(addrs, func(i, j int) bool { return addrs[i].label < addrs[j].label })
	rows := []string{"Label|Dynamic|Address"}
	for _, ad := range addrs {
		dyn := "no"
		if ad.dynamic {
			dyn = "yes"
		}
		address := fmt.Sprintf("%s:%d", ad.hostIP, ad.port)
		if ad.to > 0 && ad.to != ad.port {
			address += fmt.Sprintf(" -> %d", ad.to)
		}
		rows = append(rows, "*"+ad.label+"|"+dyn+"|"+address)
	}
	return formatList(rows)
}

// formatTaskResources is one task's resource table: what the scheduler allocated and, when
// usage is known (-stats on a running task), what the task uses of it. detailed adds the
// breakdown of memory and CPU the client measured.
func formatTaskResources(a *api.Allocation, task string, usage *api.TaskResourceUsage, detailed bool) string {
	var tr *api.AllocatedTaskResources
	if a.AllocatedResources != nil {
		tr = a.AllocatedResources.Tasks[task]
	}
	if tr == nil {
		return ""
	}
	var disk int64
	if a.AllocatedResources != nil {
		disk = a.AllocatedResources.Shared.DiskMB
	}
	cpu := fmt.Sprintf("%d MHz", tr.Cpu.CpuShares)
	mem := humanBytes(tr.Memory.MemoryMB << 20)
	if tr.Memory.MemoryMaxMB > tr.Memory.MemoryMB {
		mem += fmt.Sprintf(" (max %s)", humanBytes(tr.Memory.MemoryMaxMB<<20))
	}
	var ru *api.ResourceUsage
	if usage != nil {
		ru = usage.ResourceUsage
	}
	if ru != nil && ru.CpuStats != nil {
		cpu = fmt.Sprintf("%.0f/%s", ru.CpuStats.TotalTicks, cpu)
	}
	if ru != nil && ru.MemoryStats != nil {
		used := ru.MemoryStats.RSS
		if used == 0 {
			used = ru.MemoryStats.Usage
		}
		mem = humanBytes(int64(used)) + "/" + mem
	}
	out := formatList([]string{"CPU|Memory|Disk", cpu + "|" + mem + "|" + humanBytes(disk<<20)})
	if !detailed || ru == nil {
		return out
	}
	var rows []string
	if m := ru.MemoryStats; m != nil {
		rows = append(rows,
			"RSS|"+humanBytes(int64(m.RSS)),
			"Cache|"+humanBytes(int64(m.Cache)),
			"Swap|"+humanBytes(int64(m.Swap)),
			"Usage|"+humanBytes(int64(m.Usage)),
			"Max Usage|"+humanBytes(int64(m.MaxUsage)))
		if len(m.Measured) > 0 {
			rows = append(rows, "Memory Measured|"+strings.Join(m.Measured, ","))
		}
	}
	if c := ru.CpuStats; c != nil {
		rows = append(rows,
			fmt.Sprintf("CPU Percent|%.2f%%", c.Percent),
			fmt.Sprintf("CPU Ticks|%.0f MHz", c.TotalTicks),
			fmt.Sprintf("System Mode|%.2f%%", c.SystemMode),
			fmt.Sprintf("User Mode|%.2f%%", c.UserMode),
			fmt.Sprintf("Throttled Periods|%d", c.ThrottledPeriods),
			fmt.Sprintf("Throttled Time|%d", c.ThrottledTime))
		if len(c.Measured) > 0 {
			rows = append(rows, "CPU Measured|"+strings.Join(c.Measured, ","))
		}
	}
	if len(rows) == 0 {
		return out
	}
	return out + "\n\nResource Usage\n" + formatKV(rows)
}
