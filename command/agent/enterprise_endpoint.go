package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// errEnterpriseOnly is what upstream's community edition answers on its Enterprise routes;
// tools read the text to tell the editions apart, so it is upstream's, word for word.
var errEnterpriseOnly = structs.NewErrCode(http.StatusNotImplemented, "Nomad Enterprise only endpoint")

func (s *HTTPServer) enterpriseOnly(http.ResponseWriter, *http.Request) (any, error) {
	return nil, errEnterpriseOnly
}
