package nomad

import (
	"testing"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestSearch_OnlyWhatTheTokenMayRead(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.Namespace.Upsert(&structs.NamespaceUpsertRequest{
		Namespaces: []*structs.Namespace{{Name: "secret"}}, WriteRequest: structs.WriteRequest{AuthToken: mgmt}}, &gr))
	registerJob(t, srv, mgmt, mock.JobWithID("web-public"))
	hidden := mock.JobWithID("web-hidden")
	hidden.Namespace = "secret"
	registerJob(t, srv, mgmt, hidden)
	_, err := putVariable(srv, mgmt, structs.VarOpSet, newVar("web/visible", map[string]string{"k": "v"}))
	must.NoError(t, err)
	_, err = putVariable(srv, mgmt, structs.VarOpSet, newVar("other/web", map[string]string{"k": "v"}))
	must.NoError(t, err)

	reader := clientToken(t, srv, mgmt, "reader", `namespace "default" { policy = "read" }`+"\n"+
		varPolicy("default", "web/*", `"list"`)).SecretID

	prefix := func(token, ns string, ctx structs.SearchContext) (*structs.SearchResponse, error) {
		var reply structs.SearchResponse
		err := srv.Endpoints.Search.PrefixSearch(&structs.SearchRequest{Prefix: "web", Context: ctx,
			QueryOptions: structs.QueryOptions{Namespace: ns, AuthToken: token}}, &reply)
		return &reply, err
	}

	t.Run("all namespaces, filtered per row", func(t *testing.T) {
		reply, err := prefix(reader, "*", structs.SearchJobs)
		must.NoError(t, err)
		must.Eq(t, []string{"web-public"}, reply.Matches[structs.SearchJobs])
		reply, err = prefix(mgmt, "*", structs.SearchJobs)
		must.NoError(t, err)
		must.Eq(t, []string{"web-hidden", "web-public"}, reply.Matches[structs.SearchJobs])
	})
	t.Run("a namespace the token cannot read is refused", func(t *testing.T) {
		_, err := prefix(reader, "secret", structs.SearchJobs)
		must.ErrorContains(t, err, "Permission denied")
		must.Eq(t, 403, structs.ErrorCode(err))
	})
	t.Run("all leaves out contexts the token cannot read", func(t *testing.T) {
		reply, err := prefix(reader, "default", structs.SearchAll)
		must.NoError(t, err)
		must.MapNotContainsKey(t, reply.Matches, structs.SearchNodes)
		must.Eq(t, []string{"web-public"}, reply.Matches[structs.SearchJobs])
		must.Eq(t, []string{"web/visible"}, reply.Matches[structs.SearchVariables])
	})
	t.Run("fuzzy scopes", func(t *testing.T) {
		var reply structs.FuzzySearchResponse
		must.NoError(t, srv.Endpoints.Search.FuzzySearch(&structs.FuzzySearchRequest{Text: "SLEEP", Context: structs.SearchAll,
			QueryOptions: structs.QueryOptions{Namespace: "*", AuthToken: reader}}, &reply))
		must.Eq(t, []structs.FuzzyMatch{{ID: "/bin/sleep", Scope: []string{"default", "web-public", "web", "server"}}},
			reply.Matches[structs.SearchCommands])
		must.Eq(t, []structs.FuzzyMatch{{ID: "server", Scope: []string{"default", "web-public", "web"}}},
			mustFuzzy(t, srv, reader, "serv", structs.SearchTasks))
		// Exact before prefix before substring.
		must.Eq(t, []structs.FuzzyMatch{{ID: "web-public", Scope: []string{"default"}}}, mustFuzzy(t, srv, reader, "web-p", structs.SearchJobs))
	})
	t.Run("bad requests", func(t *testing.T) {
		var reply structs.FuzzySearchResponse
		err := srv.Endpoints.Search.FuzzySearch(&structs.FuzzySearchRequest{Text: "w", Context: structs.SearchAll,
			QueryOptions: structs.QueryOptions{AuthToken: mgmt}}, &reply)
		must.ErrorContains(t, err, "invalid Text")
		_, err = prefix(mgmt, "default", "bogus")
		must.ErrorContains(t, err, `invalid Context "bogus"`)
		_, err = prefix(mgmt, "default", structs.SearchCommands)
		must.ErrorContains(t, err, `invalid Context "commands"`)
	})
}

func mustFuzzy(t *testing.T, srv *Server, token, text string, ctx structs.SearchContext) []structs.FuzzyMatch {
	t.Helper()
	var reply structs.FuzzySearchResponse
	must.NoError(t, srv.Endpoints.Search.FuzzySearch(&structs.FuzzySearchRequest{Text: text, Context: ctx,
		QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: token}}, &reply))
	return reply.Matches[ctx]
}
