package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

var errNamespaceNotFound = &structs.CodedError{Code: http.StatusNotFound, Msg: "namespace not found", Err: structs.ErrNotFound}

func (s *HTTPServer) namespaceList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NamespaceListRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "Namespace.List", &args, func(reply *structs.NamespaceListResponse) (any, error) {
		return nonNil(reply.Namespaces), nil
	})
}

func (s *HTTPServer) namespaceRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NamespaceSpecificRequest{Name: r.PathValue("name"), QueryOptions: queryOptions(r)}
	return read(s, w, "Namespace.GetNamespace", &args, func(reply *structs.SingleNamespaceResponse) (any, error) {
		return found(reply.Namespace, errNamespaceNotFound)
	})
}

func (s *HTTPServer) namespaceUpsert(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.Namespace
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if err := keyFromPath(r, "name", &body.Name, structs.BadRequest("Namespace name does not match request path")); err != nil {
		return nil, err
	}
	ns := &structs.Namespace{
		Name:        body.Name,
		Description: body.Description,
		Quota:       body.Quota,
		Meta:        body.Meta,
	}
	if c := body.Capabilities; c != nil {
		ns.Capabilities = &structs.NamespaceCapabilities{
			EnabledTaskDrivers:   c.EnabledTaskDrivers,
			DisabledTaskDrivers:  c.DisabledTaskDrivers,
			EnabledNetworkModes:  c.EnabledNetworkModes,
			DisabledNetworkModes: c.DisabledNetworkModes,
		}
	}
	if c := body.NodePoolConfiguration; c != nil {
		ns.NodePoolConfiguration = &structs.NamespaceNodePoolConfiguration{Default: c.Default, Allowed: c.Allowed}
	}
	args := structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{ns}, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "Namespace.Upsert", &args)
}

func (s *HTTPServer) namespaceDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NamespaceDeleteRequest{Namespaces: []string{r.PathValue("name")}, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "Namespace.Delete", &args)
}
