package fingerprint

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Sources are where the facts come from. HostSources reads the running machine; tests fill in
// their own. A nil reader, or one that fails, leaves its facts out rather than failing the
// node: a client on an unusual system still registers, with what it could learn.
type Sources struct {
	GOOS, GOARCH string
	NumCPU       int
	// CPUInfo returns /proc/cpuinfo, MemInfo /proc/meminfo, OSRelease /etc/os-release.
	CPUInfo   func() ([]byte, error)
	MemInfo   func() ([]byte, error)
	OSRelease func() ([]byte, error)
	// KernelVersion returns the kernel release (uname -r).
	KernelVersion func() (string, error)
	Hostname      func() (string, error)
	// Statfs returns the total and free megabytes of the file system holding path.
	Statfs func(path string) (totalMB, freeMB int64, err error)
	// Network returns the node's address on the named interface ("" for the default one).
	Network func(iface string) (device, ip string, err error)
	// Interfaces lists the machine's interfaces and addresses, where host networks are found.
	Interfaces func() ([]Interface, error)
}

// Config is what the operator's client block says about the node's resources.
type Config struct {
	AllocDir         string
	NetworkInterface string
	// CPUTotalCompute and MemoryTotalMB override what the machine reports (cpu_total_compute,
	// memory_total_mb), for machines whose /proc is missing or misleading.
	CPUTotalCompute int
	MemoryTotalMB   int
	MinDynamicPort  int
	MaxDynamicPort  int
	// Reserved is kept back from allocations: the client block's reserved block.
	ReservedCPU   int
	ReservedMemMB int
	ReservedDisk  int
	ReservedPorts string
	// HostNetworks are the client's host_network blocks.
	HostNetworks []HostNetwork
}

// Result is the node's part that fingerprinting fills.
type Result struct {
	Attributes map[string]string
	Resources  *structs.NodeResources
	Reserved   *api.NodeReservedResources
	// HostNetworks are the host_network blocks as configured (the node's HostNetworks).
	HostNetworks map[string]*api.HostNetworkInfo
	// Warnings name host networks no address of the machine matched: ports that ask for one
	// are not placed on this node.
	Warnings []string
}

// Fingerprint describes the node. It fails only on configuration errors (a bad port spec or
// range), never on a fact it cannot read.
func Fingerprint(cfg Config, src Sources) (*Result, error) {
	if _, err := structs.ParsePortSpec(cfg.ReservedPorts); err != nil {
		return nil, fmt.Errorf("client reserved reserved_ports: %w", err)
	}
	if err := checkHostNetworks(cfg.HostNetworks); err != nil {
		return nil, err
	}
	lo, hi := structs.DynamicPortRange(&api.NodeResources{MinDynamicPort: cfg.MinDynamicPort, MaxDynamicPort: cfg.MaxDynamicPort})
	if lo < 1 || hi > structs.MaxPort || lo > hi {
		return nil, fmt.Errorf("client min_dynamic_port/max_dynamic_port: %d-%d must be a range within 1-%d", lo, hi, structs.MaxPort)
	}
	attrs := map[string]string{
		"kernel.name": src.GOOS,
		"os.name":     src.GOOS,
		"cpu.arch":    src.GOARCH,
	}
	res := &structs.NodeResources{NodeResources: api.NodeResources{MinDynamicPort: lo, MaxDynamicPort: hi}}

	cpu := readCPU(src)
	if cpu.cores > 0 {
		attrs["cpu.numcores"] = strconv.Itoa(cpu.cores)
		res.Cpu.TotalCpuCores = uint16(min(cpu.cores, math.MaxUint16))
		for i := range res.Cpu.TotalCpuCores {
			res.Cpu.ReservableCpuCores = append(res.Cpu.ReservableCpuCores, i)
		}
	}
	if cpu.mhz > 0 {
		attrs["cpu.frequency"] = strconv.Itoa(cpu.mhz)
	}
	if cpu.model != "" {
		attrs["cpu.modelname"] = cpu.model
	}
	total := cpu.mhz * cpu.cores
	if cfg.CPUTotalCompute > 0 {
		total = cfg.CPUTotalCompute
	}
	if total > 0 {
		attrs["cpu.totalcompute"] = strconv.Itoa(total)
		res.Cpu.CpuShares = int64(total)
	}

	memBytes := readMemKB(src) * 1024
	if cfg.MemoryTotalMB > 0 {
		memBytes = int64(cfg.MemoryTotalMB) * 1024 * 1024
	}
	if memBytes > 0 {
		attrs["memory.totalbytes"] = strconv.FormatInt(memBytes, 10)
		res.Memory.MemoryMB = memBytes / (1024 * 1024)
	}

	if src.Statfs != nil && cfg.AllocDir != "" {
		if totalMB, freeMB, err := src.Statfs(cfg.AllocDir); err == nil {
			attrs["unique.storage.volume"] = cfg.AllocDir
			attrs["unique.storage.bytestotal"] = strconv.FormatInt(totalMB*1024*1024, 10)
			attrs["unique.storage.bytesfree"] = strconv.FormatInt(freeMB*1024*1024, 10)
			res.Disk.DiskMB = freeMB
		}
	}
	if src.KernelVersion != nil {
		if v, err := src.KernelVersion(); err == nil && v != "" {
			attrs["kernel.version"] = v
		}
	}
	if src.OSRelease != nil {
		if raw, err := src.OSRelease(); err == nil {
			id, version := parseOSRelease(raw)
			if id != "" {
				attrs["os.name"] = id
			}
			if version != "" {
				attrs["os.version"] = version
			}
		}
	}
	if src.Hostname != nil {
		if h, err := src.Hostname(); err == nil && h != "" {
			attrs["unique.hostname"] = h
		}
	}
	var defaultDev, defaultIP string
	if src.Network != nil {
		if dev, ip, err := src.Network(cfg.NetworkInterface); err == nil && ip != "" {
			attrs["unique.network.ip-address"] = ip
			res.Networks = []*api.NetworkResource{{Mode: "host", Device: dev, IP: ip, CIDR: cidrOf(ip)}}
			defaultDev, defaultIP = dev, ip
		}
	}
	var warnings []string
	var ifaces []Interface
	if src.Interfaces != nil {
		// A machine whose interfaces cannot be listed still registers, with its default
		// address; its named host networks are then reported missing.
		ifaces, _ = src.Interfaces()
	}
	if len(ifaces) == 0 && defaultIP != "" {
		if a, err := netip.ParseAddr(defaultIP); err == nil {
			ifaces = []Interface{{Name: defaultDev, Up: true, Addrs: []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}}}
		}
	}
	nets, unmatched := nodeNetworks(ifaces, cfg.HostNetworks, defaultDev, defaultIP)
	res.NodeNetworks = nets
	for _, name := range unmatched {
		warnings = append(warnings, fmt.Sprintf("host_network %q matches no address of this machine", name))
	}
	reserved := &api.NodeReservedResources{
		Cpu:      api.NodeReservedCpuResources{CpuShares: uint64(max(cfg.ReservedCPU, 0))},
		Memory:   api.NodeReservedMemoryResources{MemoryMB: uint64(max(cfg.ReservedMemMB, 0))},
		Disk:     api.NodeReservedDiskResources{DiskMB: uint64(max(cfg.ReservedDisk, 0))},
		Networks: api.NodeReservedNetworkResources{ReservedHostPorts: cfg.ReservedPorts},
	}
	return &Result{Attributes: attrs, Resources: res, Reserved: reserved,
		HostNetworks: hostNetworkInfo(cfg.HostNetworks), Warnings: warnings}, nil
}

func cidrOf(ip string) string {
	if strings.Contains(ip, ":") {
		return ip + "/128"
	}
	return ip + "/32"
}

type cpuFacts struct {
	cores, mhz int
	model      string
}

// readCPU counts processors in /proc/cpuinfo and takes the highest clock it lists; without
// it, the core count is the runtime's and the clock unknown.
func readCPU(src Sources) cpuFacts {
	f := cpuFacts{cores: src.NumCPU}
	if src.CPUInfo == nil {
		return f
	}
	raw, err := src.CPUInfo()
	if err != nil {
		return f
	}
	processors := 0
	var maxMHz float64
	for line := range strings.Lines(string(raw)) {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			processors++
		case "cpu MHz":
			if v, err := strconv.ParseFloat(val, 64); err == nil && v > maxMHz {
				maxMHz = v
			}
		case "model name":
			if f.model == "" {
				f.model = val
			}
		}
	}
	if processors > 0 {
		f.cores = processors
	}
	f.mhz = int(math.Round(maxMHz))
	return f
}

// readMemKB reads MemTotal from /proc/meminfo.
func readMemKB(src Sources) int64 {
	if src.MemInfo == nil {
		return 0
	}
	raw, err := src.MemInfo()
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kb < 0 || kb > math.MaxInt64/1024 {
				return 0
			}
			return kb
		}
	}
	return 0
}

// parseOSRelease reads ID and VERSION_ID from an os-release file.
func parseOSRelease(raw []byte) (id, version string) {
	for line := range strings.Lines(string(raw)) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"'`)
		switch k {
		case "ID":
			id = v
		case "VERSION_ID":
			version = v
		}
	}
	return id, version
}

// HostSources reads the machine the client runs on.
func HostSources() Sources {
	readFile := func(path string) func() ([]byte, error) {
		return func() ([]byte, error) { return os.ReadFile(path) }
	}
	return Sources{
		GOOS:      runtime.GOOS,
		GOARCH:    runtime.GOARCH,
		NumCPU:    runtime.NumCPU(),
		CPUInfo:   readFile("/proc/cpuinfo"),
		MemInfo:   readFile("/proc/meminfo"),
		OSRelease: readFile("/etc/os-release"),
		KernelVersion: func() (string, error) {
			raw, err := os.ReadFile("/proc/sys/kernel/osrelease")
			return strings.TrimSpace(string(raw)), err
		},
		Hostname:   os.Hostname,
		Statfs:     statfs,
		Network:    hostNetwork,
		Interfaces: hostInterfaces,
	}
}

var errNoAddress = errors.New("no usable address")
