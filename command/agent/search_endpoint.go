package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// searchBody is what both searches read from the body; the query options (namespace, token)
// come from the URL and headers as for every read.
type searchBody struct {
	Prefix  string
	Text    string
	Context structs.SearchContext
}

func (s *HTTPServer) searchPrefix(w http.ResponseWriter, r *http.Request) (any, error) {
	var body searchBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.SearchRequest{Prefix: body.Prefix, Context: body.Context, QueryOptions: queryOptions(r)}
	return read(s, w, "Search.PrefixSearch", &args, wholeReply[structs.SearchResponse])
}

func (s *HTTPServer) searchFuzzy(w http.ResponseWriter, r *http.Request) (any, error) {
	var body searchBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.FuzzySearchRequest{Text: body.Text, Context: body.Context, QueryOptions: queryOptions(r)}
	return read(s, w, "Search.FuzzySearch", &args, wholeReply[structs.FuzzySearchResponse])
}
