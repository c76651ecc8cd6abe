package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// nodeEventsShown is how many of a node's newest events node status prints without -verbose.
const nodeEventsShown = 10

// formatNodeEvents is the node's events table, newest first.
func formatNodeEvents(n *api.Node, verbose bool) string {
	if len(n.Events) == 0 {
		return ""
	}
	rows := []string{"Time|Subsystem|Message"}
	if verbose {
		rows[0] += "|Details"
	}
	for i := len(n.Events) - 1; i >= 0; i-- {
		if !verbose && len(rows) > nodeEventsShown {
			break
		}
		e := n.Events[i]
		if e == nil {
			continue
		}
		row := formatTime(e.Timestamp) + "|" + e.Subsystem + "|" + strings.ReplaceAll(e.Message, "|", "/")
		if verbose {
			row += "|" + orNone(strings.Join(mapPairs(e.Details), ", "))
		}
		rows = append(rows, row)
	}
	return formatList(rows)
}

func mapPairs(m map[string]string) []string {
	rows := mapRows(m)
	if len(m) == 0 {
		return nil
	}
	for i, r := range rows {
		rows[i] = strings.Replace(r, "|", ": ", 1)
	}
	return rows
}

// formatNodeAllocated is what the node's live allocations hold against what the node offers
// them (its resources less what it reserves), as the scheduler counts.
func formatNodeAllocated(n *api.Node, allocs []*api.Allocation) string {
	if n.NodeResources == nil {
		return ""
	}
	var cpu, mem, disk int64
	for _, a := range allocs {
		if a.AllocatedResources == nil || a.DesiredStatus != "run" || a.ClientStatus == "complete" ||
			a.ClientStatus == "failed" || a.ClientStatus == "lost" {
			continue
		}
		for _, tr := range a.AllocatedResources.Tasks {
			if tr != nil {
				cpu += tr.Cpu.CpuShares
				mem += tr.Memory.MemoryMB
			}
		}
		disk += a.AllocatedResources.Shared.DiskMB
	}
	totalCPU, totalMem, totalDisk := n.NodeResources.Cpu.CpuShares, n.NodeResources.Memory.MemoryMB, n.NodeResources.Disk.DiskMB
	if r := n.ReservedResources; r != nil {
		totalCPU -= int64(r.Cpu.CpuShares)
		totalMem -= int64(r.Memory.MemoryMB)
		totalDisk -= int64(r.Disk.DiskMB)
	}
	return formatList([]string{"CPU|Memory|Disk", fmt.Sprintf("%d/%d MHz|%s/%s|%s/%s",
		cpu, totalCPU, humanBytes(mem<<20), humanBytes(totalMem<<20), humanBytes(disk<<20), humanBytes(totalDisk<<20))})
}

// formatHostUtilization is what the node's host uses, from its client's statistics.
func formatHostUtilization(n *api.Node, s *api.HostStats) string {
	if s == nil {
		return ""
	}
	cpu := fmt.Sprintf("%.0f", s.CPUTicksConsumed)
	if n.NodeResources != nil {
		cpu += fmt.Sprintf("/%d", n.NodeResources.Cpu.CpuShares)
	}
	cpu += " MHz"
	mem, disk := "-", "-"
	if m := s.Memory; m != nil {
		mem = humanBytes(int64(m.Used)) + "/" + humanBytes(int64(m.Total))
	}
	if d := s.AllocDirStats; d != nil {
		disk = humanBytes(int64(d.Used)) + "/" + humanBytes(int64(d.Size))
	}
	return formatList([]string{"CPU|Memory|Disk", cpu + "|" + mem + "|" + disk})
}

func formatUptime(s *api.HostStats) string {
	if s == nil {
		return ""
	}
	return (time.Duration(s.Uptime) * time.Second).String()
}
