package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// agentReload does what SIGHUP does: it reads the tls block's certificate and key files
// again for HTTPS, the RPC port and the client's connections. It needs agent:write. A
// failure leaves the certificates in use and is a 500 saying which file failed.
func (s *HTTPServer) agentReload(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentWrite}); err != nil {
		return nil, err
	}
	if err := s.agent.ReloadTLS(); err != nil {
		return nil, structs.NewErrCode(http.StatusInternalServerError, "reloading TLS certificates failed; the ones in use stay: %v", err)
	}
	s.logger.Info("reloaded TLS certificates on an API request")
	return nil, nil
}
