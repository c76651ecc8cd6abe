package agent

import (
	"net"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// The agent's host data (what `nomad operator debug` collects) and its client's server list.

// hostData is api.HostData plus the uptime, which upstream's shape lacks; clients ignore the
// extra field.
type hostData struct {
	api.HostData
	UptimeSeconds int64 `json:",omitempty"`
}

type hostDataResponse struct {
	AgentID  string
	HostData *hostData `json:",omitempty"`
}

// agentHost answers the host data of the agent the request names: this one by default,
// another node's client with node_id (relayed through the server holding its connection),
// another server with server_id (its name, node ID or "leader"; see agent_debug_forward.go).
// With ACLs it needs agent read, checked here and again by the agent whose data it is;
// without ACLs, as upstream, only an agent started with enable_debug answers it, since the
// data names the host's files, network and environment (the agent whose host it is decides).
func (s *HTTPServer) agentHost(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentRead}); err != nil {
		return nil, err
	}
	if sent, out, err := s.toNamedAgent(w, r); sent {
		return out, err
	}
	if err := s.hostDataAllowed(); err != nil {
		return nil, err
	}
	agentID := s.ownNodeID()
	if s.srv != nil && r.URL.Query().Get("node_id") == "" {
		agentID = s.srv.Config().NodeID
	}
	return &hostDataResponse{AgentID: agentID, HostData: s.collectHostData()}, nil
}

// hostDataAllowed: without ACLs, only an agent started with enable_debug gives its host data.
func (s *HTTPServer) hostDataAllowed() error {
	if !s.agent.config.ACL.Enabled && !s.agent.config.EnableDebug {
		return structs.PermissionDenied("agent read required: with ACLs disabled, host data needs enable_debug = true")
	}
	return nil
}

// streamedHost answers this node's host data to a server that relays a node_id request (it
// decided on the caller's token).
func (s *HTTPServer) streamedHost(_ http.ResponseWriter, _ *http.Request) (any, error) {
	c := s.agent.Client()
	if c == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	if err := s.hostDataAllowed(); err != nil {
		return nil, err
	}
	return &hostDataResponse{AgentID: c.NodeID(), HostData: s.collectHostData()}, nil
}

// servedHost answers this server agent's host data over an agent stream, after checking the
// caller's token (and enable_debug) as its own HTTP API would.
func (s *HTTPServer) servedHost(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentRead}); err != nil {
		return nil, err
	}
	if err := s.hostDataAllowed(); err != nil {
		return nil, err
	}
	return &hostDataResponse{AgentID: s.srv.Config().NodeID, HostData: s.collectHostData()}, nil
}

func (s *HTTPServer) collectHostData() *hostData {
	out := &hostData{HostData: api.HostData{
		OS:          hostOS(),
		Network:     hostNetwork(),
		ResolvConf:  readSmallFile("/etc/resolv.conf"),
		Hosts:       readSmallFile("/etc/hosts"),
		Environment: redactedEnvironment(os.Environ()),
		Disk:        map[string]api.DiskUsage{},
	}}
	if raw := readSmallFile("/proc/uptime"); raw != "" {
		if f := strings.Fields(raw); len(f) > 0 {
			if secs, err := strconv.ParseFloat(f[0], 64); err == nil {
				out.UptimeSeconds = int64(secs)
			}
		}
	}
	dirs := []string{"/"}
	if d := s.agent.config.DataDir; d != "" {
		dirs = append(dirs, d)
	}
	for _, dir := range dirs {
		if du, ok := diskUsage(dir); ok {
			out.Disk[dir] = du
		}
	}
	return out
}

func hostOS() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return runtime.GOOS
	}
	str := func(b [65]int8) string {
		var sb strings.Builder
		for _, c := range b {
			if c == 0 {
				break
			}
			sb.WriteByte(byte(c))
		}
		return sb.String()
	}
	return strings.Join([]string{str(u.Sysname), str(u.Nodename), str(u.Release), str(u.Version), str(u.Machine)}, " ")
}

func hostNetwork() []map[string]string {
	out := []map[string]string{}
	ifaces, err := net.Interfaces()
	if err != nil {
		return out
	}
	for _, iface := range ifaces {
		addrs, _ := iface.Addrs()
		var list []string
		for _, a := range addrs {
			list = append(list, a.String())
		}
		out = append(out, map[string]string{
			"name":  iface.Name,
			"flags": iface.Flags.String(),
			"mtu":   strconv.Itoa(iface.MTU),
			"addrs": strings.Join(list, " "),
		})
	}
	return out
}

// readSmallFile reads a system file of a few kilobytes; a missing one is empty.
func readSmallFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.Read(buf)
	return string(buf[:n])
}

func diskUsage(path string) (api.DiskUsage, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return api.DiskUsage{}, false
	}
	bsize := uint64(st.Bsize)
	total := st.Blocks * bsize
	free := st.Bfree * bsize
	return api.DiskUsage{DiskMB: int64(total >> 20), UsedMB: int64((total - free) >> 20)}, true
}

// secretEnvWords mark environment variables whose values are credentials; their values are
// answered as <redacted>, as upstream redacts them.
var secretEnvWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "KEY", "CREDENTIAL", "AUTH", "PRIVATE", "CERT"}

func redactedEnvironment(env []string) map[string]string {
	out := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(k)
		for _, w := range secretEnvWords {
			if strings.Contains(upper, w) {
				v = "<redacted>"
				break
			}
		}
		out[k] = v
	}
	return out
}

// agentServersList answers the servers this agent's client talks to: a client-only agent's
// list, in the order it tries them. A client inside a server agent talks to that server in
// process, so the list is the agent's own RPC address.
func (s *HTTPServer) agentServersList(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentRead}); err != nil {
		return nil, err
	}
	if s.agent.Client() == nil {
		return nil, structs.BadRequest("this agent runs no client: it has no server list")
	}
	if rs := s.agent.rpcServers; rs != nil {
		return rs.Servers(), nil
	}
	return []string{s.agent.config.Advertise.RPC}, nil
}

// agentServersSet replaces a client-only agent's servers with ?address= (host:port,
// repeatable) until the agent restarts, which goes back to client.servers. The client of a
// server agent reaches its own server in process and has no list to replace.
func (s *HTTPServer) agentServersSet(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentWrite}); err != nil {
		return nil, err
	}
	addrs := r.URL.Query()["address"]
	if len(addrs) == 0 {
		return nil, structs.BadRequest("missing address: name at least one server RPC address (host:port)")
	}
	// Checked in sorted order, so the first bad address named is the same whatever the order;
	// the list itself keeps the caller's order, which is the order the client tries them.
	sorted := append([]string(nil), addrs...)
	sort.Strings(sorted)
	for _, a := range sorted {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return nil, structs.BadRequest("address %q: want host:port", a)
		}
	}
	if s.agent.Client() == nil {
		return nil, structs.BadRequest("this agent runs no client: it has no server list")
	}
	if rs := s.agent.rpcServers; rs != nil {
		return nil, rs.SetServers(addrs)
	}
	return nil, structs.BadRequest("this agent's client talks to its own server in process: its server list cannot be replaced")
}
