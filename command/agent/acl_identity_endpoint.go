package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// aclClientIntroductionToken signs a client introduction token (node write).
func (s *HTTPServer) aclClientIntroductionToken(_ http.ResponseWriter, r *http.Request) (any, error) {
	var body api.ACLIdentityClientIntroductionTokenRequest
	if err := decodeOptionalBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.ClientIntroductionTokenRequest{
		TTL: body.TTL, NodeName: body.NodeName, NodePool: body.NodePool, WriteRequest: writeRequest(r),
	}
	var reply structs.ClientIntroductionTokenResponse
	if err := s.rpc.RPC("ACL.CreateClientIntroductionToken", &args, &reply); err != nil {
		return nil, err
	}
	return api.ACLIdentityClientIntroductionTokenResponse{JWT: reply.JWT}, nil
}
