package fingerprint

import (
	"errors"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const cpuinfo = `processor	: 0
model name	: Test CPU @ 2.40GHz
cpu MHz		: 2400.000

processor	: 1
model name	: Test CPU @ 2.40GHz
cpu MHz		: 2399.998
`

const meminfo = "MemTotal:        8167848 kB\nMemFree:          123456 kB\n"

func machine() Sources {
	return Sources{
		GOOS: "linux", GOARCH: "amd64", NumCPU: 8,
		CPUInfo:       func() ([]byte, error) { return []byte(cpuinfo), nil },
		MemInfo:       func() ([]byte, error) { return []byte(meminfo), nil },
		OSRelease:     func() ([]byte, error) { return []byte("NAME=\"Ubuntu\"\nID=ubuntu\nVERSION_ID=\"22.04\"\n"), nil },
		KernelVersion: func() (string, error) { return "6.1.0-test", nil },
		Hostname:      func() (string, error) { return "box1", nil },
		Statfs:        func(string) (int64, int64, error) { return 100000, 40000, nil },
		Network:       func(string) (string, string, error) { return "eth0", "10.0.0.5", nil },
	}
}

func TestFingerprint_Machine(t *testing.T) {
	r, err := Fingerprint(Config{AllocDir: "/var/alloc"}, machine())
	must.NoError(t, err)
	must.Eq(t, map[string]string{
		"kernel.name": "linux", "kernel.version": "6.1.0-test", "os.name": "ubuntu", "os.version": "22.04",
		"cpu.arch": "amd64", "cpu.numcores": "2", "cpu.frequency": "2400", "cpu.totalcompute": "4800",
		"cpu.modelname": "Test CPU @ 2.40GHz", "memory.totalbytes": "8363876352",
		"unique.hostname": "box1", "unique.network.ip-address": "10.0.0.5",
		"unique.storage.volume": "/var/alloc", "unique.storage.bytestotal": "104857600000",
		"unique.storage.bytesfree": "41943040000",
	}, r.Attributes)
	must.Eq(t, int64(4800), r.Resources.Cpu.CpuShares)
	must.Eq(t, uint16(2), r.Resources.Cpu.TotalCpuCores)
	must.Eq(t, int64(7976), r.Resources.Memory.MemoryMB)
	must.Eq(t, int64(40000), r.Resources.Disk.DiskMB)
	must.Eq(t, 20000, r.Resources.MinDynamicPort)
	must.Eq(t, 32000, r.Resources.MaxDynamicPort)
	must.Eq(t, []*api.NetworkResource{{Mode: "host", Device: "eth0", IP: "10.0.0.5", CIDR: "10.0.0.5/32"}}, r.Resources.Networks)
}

func TestFingerprint_ConfigOverrides(t *testing.T) {
	broken := Sources{GOOS: "linux", GOARCH: "arm64", NumCPU: 4,
		CPUInfo: func() ([]byte, error) { return nil, errors.New("no /proc") },
		MemInfo: func() ([]byte, error) { return []byte("garbage"), nil },
	}
	r, err := Fingerprint(Config{
		CPUTotalCompute: 9000, MemoryTotalMB: 2048, MinDynamicPort: 30000, MaxDynamicPort: 30100,
		ReservedCPU: 500, ReservedMemMB: 256, ReservedDisk: 1024, ReservedPorts: "22,80-81",
	}, broken)
	must.NoError(t, err)
	must.Eq(t, "4", r.Attributes["cpu.numcores"])
	must.Eq(t, "9000", r.Attributes["cpu.totalcompute"])
	must.Eq(t, int64(9000), r.Resources.Cpu.CpuShares)
	must.Eq(t, int64(2048), r.Resources.Memory.MemoryMB)
	must.Eq(t, 30000, r.Resources.MinDynamicPort)
	must.Eq(t, 30100, r.Resources.MaxDynamicPort)
	must.Eq(t, &api.NodeReservedResources{
		Cpu: api.NodeReservedCpuResources{CpuShares: 500}, Memory: api.NodeReservedMemoryResources{MemoryMB: 256},
		Disk: api.NodeReservedDiskResources{DiskMB: 1024}, Networks: api.NodeReservedNetworkResources{ReservedHostPorts: "22,80-81"},
	}, r.Reserved)
}

func TestFingerprint_BadConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "port out of range", cfg: Config{ReservedPorts: "70000"}, want: "reserved_ports"},
		{name: "backwards range", cfg: Config{ReservedPorts: "90-80"}, want: "reserved_ports"},
		{name: "not a number", cfg: Config{ReservedPorts: "ssh"}, want: "reserved_ports"},
		{name: "dynamic range backwards", cfg: Config{MinDynamicPort: 40000, MaxDynamicPort: 30000}, want: "min_dynamic_port"},
		{name: "dynamic range too high", cfg: Config{MaxDynamicPort: 70000}, want: "max_dynamic_port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fingerprint(tc.cfg, machine())
			must.ErrorContains(t, err, tc.want)
		})
	}
}

func TestHostSources_Linux(t *testing.T) {
	src := HostSources()
	if src.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	r, err := Fingerprint(Config{AllocDir: t.TempDir()}, src)
	must.NoError(t, err)
	must.Positive(t, r.Resources.Memory.MemoryMB)
	must.Positive(t, r.Resources.Cpu.TotalCpuCores)
	must.Positive(t, r.Resources.Disk.DiskMB)
	must.NotEq(t, "", r.Attributes["kernel.version"])
}
