package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) aclAuthMethodList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := queryOptions(r)
	return read(s, w, "ACL.ListAuthMethods", &args, func(reply *nomad.AuthMethodListResponse) (any, error) {
		return nonNil(reply.AuthMethods), nil
	})
}

// aclAuthMethodWrite creates (PUT /v1/acl/auth-method) or updates
// (PUT /v1/acl/auth-method/:name) an auth method; both upsert by name, as upstream.
func (s *HTTPServer) aclAuthMethodWrite(w http.ResponseWriter, r *http.Request) (any, error) {
	var method structs.ACLAuthMethod
	if err := decodeBody(r, &method); err != nil {
		return nil, err
	}
	if err := keyFromPath(r, "name", &method.Name, structs.BadRequest("invalid Name: ACL auth-method name does not match request path")); err != nil {
		return nil, err
	}
	args := structs.ACLAuthMethodUpsertRequest{AuthMethods: []*structs.ACLAuthMethod{&method}, WriteRequest: writeRequest(r)}
	return write(s, w, "ACL.UpsertAuthMethods", &args, func(reply *structs.ACLAuthMethodUpsertResponse) (any, error) {
		return reply.AuthMethods[0], nil
	})
}

func (s *HTTPServer) aclAuthMethodRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := nomad.AuthMethodSpecificRequest{Name: r.PathValue("name"), QueryOptions: queryOptions(r)}
	return read(s, w, "ACL.GetAuthMethod", &args, func(reply *nomad.SingleAuthMethodResponse) (any, error) {
		return found(reply.AuthMethod, structs.NewErrCode(http.StatusNotFound, "ACL auth-method not found"))
	})
}

func (s *HTTPServer) aclAuthMethodDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ACLAuthMethodDeleteRequest{Names: []string{r.PathValue("name")}, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "ACL.DeleteAuthMethods", &args)
}

func (s *HTTPServer) aclBindingRuleList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := queryOptions(r)
	return read(s, w, "ACL.ListBindingRules", &args, func(reply *nomad.BindingRuleListResponse) (any, error) {
		return nonNil(reply.BindingRules), nil
	})
}

func (s *HTTPServer) aclBindingRuleWrite(w http.ResponseWriter, r *http.Request) (any, error) {
	var rule structs.ACLBindingRule
	if err := decodeBody(r, &rule); err != nil {
		return nil, err
	}
	if err := keyFromPath(r, "id", &rule.ID, structs.BadRequest("invalid ID: ACL binding rule ID does not match request path")); err != nil {
		return nil, err
	}
	if r.PathValue("id") == "" && rule.ID != "" {
		return nil, structs.BadRequest("invalid ID: must be empty when creating an ACL binding rule")
	}
	args := structs.ACLBindingRuleUpsertRequest{BindingRules: []*structs.ACLBindingRule{&rule}, WriteRequest: writeRequest(r)}
	return write(s, w, "ACL.UpsertBindingRules", &args, func(reply *structs.ACLBindingRuleUpsertResponse) (any, error) {
		return reply.BindingRules[0], nil
	})
}

func (s *HTTPServer) aclBindingRuleRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := nomad.BindingRuleSpecificRequest{ID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "ACL.GetBindingRule", &args, func(reply *nomad.SingleBindingRuleResponse) (any, error) {
		return found(reply.BindingRule, structs.NewErrCode(http.StatusNotFound, "ACL binding rule not found"))
	})
}

func (s *HTTPServer) aclBindingRuleDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ACLBindingRuleDeleteRequest{IDs: []string{r.PathValue("id")}, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "ACL.DeleteBindingRules", &args)
}

// aclLogin exchanges a token another system issued for a new ACL token.
func (s *HTTPServer) aclLogin(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.ACLLoginRequest
	if err := decodeBody(r, &args); err != nil {
		return nil, err
	}
	args.WriteRequest = writeRequest(r)
	return write(s, w, "ACL.Login", &args, func(reply *structs.ACLTokenUpsertResponse) (any, error) {
		return reply.Tokens[0], nil
	})
}
