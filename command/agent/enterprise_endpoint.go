package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// errEnterpriseOnly is what upstream's community edition answers on its Enterprise routes;
// tools read the text to tell the editions apart, so it is upstream's, word for word.
var errEnterpriseOnly = structs.NewErrCode(http.StatusNotImplemented, "Nomad Enterprise only endpoint")

// registerEnterpriseRoutes answers Sentinel, quota, recommendation and licence routes as
// upstream's community edition does: 501 for every verb, whoever asks.
func (s *HTTPServer) registerEnterpriseRoutes(mux *http.ServeMux) {
	// Each call spells its methods out: the ACL matrix test reads route registrations as
	// literals.
	s.handle(mux, "/v1/sentinel/policies", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/sentinel/policy/{name}", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/quotas", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/quota", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/quota/{name}", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/quota/usage/{name}", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/quota-usages", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/recommendations", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/recommendations/apply", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/recommendation", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/recommendation/{id}", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/operator/license", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
}

func (s *HTTPServer) enterpriseOnly(http.ResponseWriter, *http.Request) (any, error) {
	return nil, errEnterpriseOnly
}
