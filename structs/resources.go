package structs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// The dynamic port range a node offers when its client configuration names none, as upstream.
const (
	DefaultMinDynamicPort = 20000
	DefaultMaxDynamicPort = 32000
	MaxPort               = 65535
)

// Task and group asks when a job leaves them out, as upstream's client library fills them.
const (
	DefaultTaskCPU    = 100
	DefaultTaskMemory = 300
	DefaultDiskMB     = 300
)

// ParsePortSpec reads a port list such as "22,80,8000-8100" (reserved_ports, ReservedHostPorts).
// Every port is within 1–65535, so the result is bounded whatever the input.
func ParsePortSpec(spec string) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for part := range strings.SplitSeq(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := parsePort(lo)
		if err != nil {
			return nil, err
		}
		last := first
		if isRange {
			if last, err = parsePort(hi); err != nil {
				return nil, err
			}
			if last < first {
				return nil, fmt.Errorf("port range %q ends before it starts", part)
			}
		}
		for p := first; p <= last; p++ {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || p < 1 || p > MaxPort {
		return 0, fmt.Errorf("port %q must be a number from 1 to %d", s, MaxPort)
	}
	return p, nil
}

// DynamicPortRange is the range the node hands dynamic ports from.
func DynamicPortRange(r *api.NodeResources) (lo, hi int) {
	lo, hi = DefaultMinDynamicPort, DefaultMaxDynamicPort
	if r != nil && r.MinDynamicPort > 0 {
		lo = r.MinDynamicPort
	}
	if r != nil && r.MaxDynamicPort > 0 {
		hi = r.MaxDynamicPort
	}
	return lo, hi
}
