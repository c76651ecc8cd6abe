package structs

import "strings"

// SearchContext names a kind of object /v1/search and /v1/search/fuzzy look through; the
// strings are upstream's (api/contexts).
type SearchContext string

// Search contexts.
const (
	SearchAll             SearchContext = "all"
	SearchAllocs          SearchContext = "allocs"
	SearchDeployments     SearchContext = "deployment"
	SearchEvals           SearchContext = "evals"
	SearchJobs            SearchContext = "jobs"
	SearchNodes           SearchContext = "nodes"
	SearchNodePools       SearchContext = "node_pools"
	SearchNamespaces      SearchContext = "namespaces"
	SearchQuotas          SearchContext = "quotas"
	SearchRecommendations SearchContext = "recommendations"
	SearchScalingPolicies SearchContext = "scaling_policy"
	SearchPlugins         SearchContext = "plugins"
	SearchVariables       SearchContext = "vars"
	SearchVolumes         SearchContext = "volumes"
	SearchHostVolumes     SearchContext = "host_volumes"
	SearchGroups          SearchContext = "groups"
	SearchServices        SearchContext = "services"
	SearchTasks           SearchContext = "tasks"
	SearchImages          SearchContext = "images"
	SearchCommands        SearchContext = "commands"
	SearchClasses         SearchContext = "classes"
)

// SearchLimit is how many matches one context answers; more set its truncation flag.
const SearchLimit = 20

// Fuzzy search text bounds: shorter text matches too much to be useful (upstream's default
// min_term_length), longer is no search anyone types.
const (
	FuzzyMinTermLength = 2
	FuzzyMaxTermLength = 256
)

// SearchRequest is a prefix search.
type SearchRequest struct {
	Prefix  string
	Context SearchContext
	QueryOptions
}

// SearchResponse holds up to SearchLimit IDs per context.
type SearchResponse struct {
	Matches     map[SearchContext][]string
	Truncations map[SearchContext]bool
	QueryMeta
}

// FuzzySearchRequest is a substring search over names.
type FuzzySearchRequest struct {
	Text    string
	Context SearchContext
	QueryOptions
}

// FuzzyMatch is one match: the object's name or ID, and the IDs of its parents (namespace,
// job, group, task) outermost first.
type FuzzyMatch struct {
	ID    string
	Scope []string `json:",omitempty"`
}

// FuzzySearchResponse holds up to SearchLimit matches per context.
type FuzzySearchResponse struct {
	Matches     map[SearchContext][]FuzzyMatch
	Truncations map[SearchContext]bool
	QueryMeta
}

// ParseFuzzyText checks and normalises the text of a fuzzy search: surrounding space is
// dropped and matching ignores case, so the result is lower case.
func ParseFuzzyText(text string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(text))
	switch {
	case len(t) < FuzzyMinTermLength:
		return "", BadRequest("invalid Text: fuzzy search query must be at least %d characters", FuzzyMinTermLength)
	case len(t) > FuzzyMaxTermLength:
		return "", BadRequest("invalid Text: fuzzy search query must be at most %d characters", FuzzyMaxTermLength)
	}
	return t, nil
}

// FuzzyRank says how well name matches text (ParseFuzzyText's result): 0 no match, then
// best first 1 for equal, 2 for a prefix, 3 for a substring. Case is ignored.
func FuzzyRank(name, text string) int {
	n := strings.ToLower(name)
	switch {
	case text == "":
		return 0
	case n == text:
		return 1
	case strings.HasPrefix(n, text):
		return 2
	case strings.Contains(n, text):
		return 3
	}
	return 0
}
