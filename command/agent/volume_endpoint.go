package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// errNoCSI answers every volume and plugin write: this server has no CSI plugins to carry
// one out.
var errNoCSI = structs.NewErrCode(http.StatusNotImplemented, "CSI volumes and plugins are not supported by this server")

func (s *HTTPServer) volumeList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.VolumeListRequest{Type: r.URL.Query().Get("type"), QueryOptions: queryOptions(r)}
	return s.csiList(w, "Volume.List", &args)
}

func (s *HTTPServer) volumeRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.VolumeSpecificRequest{Type: r.PathValue("type"), ID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return s.csiRead("Volume.Read", &args)
}

func (s *HTTPServer) volumeWrite(http.ResponseWriter, *http.Request) (any, error) {
	return nil, errNoCSI
}

func (s *HTTPServer) pluginList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.PluginListRequest{Type: r.URL.Query().Get("type"), QueryOptions: queryOptions(r)}
	return s.csiList(w, "Volume.ListPlugins", &args)
}

func (s *HTTPServer) pluginRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.PluginSpecificRequest{Type: r.PathValue("type"), ID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return s.csiRead("Volume.ReadPlugin", &args)
}

// csiList answers a volume or plugin list: the server authorises it, and with no CSI built
// there is nothing to list.
func (s *HTTPServer) csiList(w http.ResponseWriter, method string, args any) (any, error) {
	return read(s, w, method, args, func(*structs.EmptyListResponse) (any, error) {
		return []any{}, nil
	})
}

// csiRead answers a volume or plugin read with the server's refusal (no such volume).
func (s *HTTPServer) csiRead(method string, args any) (any, error) {
	var reply structs.EmptyListResponse
	return nil, s.rpc.RPC(method, args, &reply)
}
