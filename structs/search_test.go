package structs

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

func TestParseFuzzyText(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		want    string
		wantErr string
	}{
		{name: "lower cased and trimmed", text: "  BiN ", want: "bin"},
		{name: "two characters", text: "ab", want: "ab"},
		{name: "too short", text: "a", wantErr: "invalid Text: fuzzy search query must be at least 2 characters"},
		{name: "only spaces", text: "    ", wantErr: "at least 2"},
		{name: "too long", text: strings.Repeat("x", FuzzyMaxTermLength+1), wantErr: "at most 256"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFuzzyText(tc.text)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				must.Eq(t, 400, ErrorCode(err))
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

func TestFuzzyRank(t *testing.T) {
	cases := []struct {
		name, candidate, text string
		want                  int
	}{
		{name: "equal", candidate: "Web", text: "web", want: 1},
		{name: "prefix", candidate: "webapp", text: "web", want: 2},
		{name: "substring", candidate: "/bin/sleep", text: "bin", want: 3},
		{name: "no match", candidate: "redis", text: "web", want: 0},
		{name: "empty text matches nothing", candidate: "web", text: "", want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, FuzzyRank(tc.candidate, tc.text))
		})
	}
}

// FuzzFuzzySearchText checks the fuzzy query path end to end on arbitrary input: a query is
// accepted only within its bounds and normalised, and a candidate is ranked only when it
// holds the query (ignoring case), with equality and prefixes ranked first.
func FuzzFuzzySearchText(f *testing.F) {
	f.Add("bin", "/bin/sleep")
	f.Add("  WEB ", "web")
	f.Add("x", "xx")
	f.Add("İ", "i̇")
	f.Fuzz(func(t *testing.T, text, candidate string) {
		q, err := ParseFuzzyText(text)
		if err != nil {
			must.Eq(t, 400, ErrorCode(err))
			return
		}
		must.Between(t, FuzzyMinTermLength, len(q), FuzzyMaxTermLength)
		must.Eq(t, strings.ToLower(q), q)
		r := FuzzyRank(candidate, q)
		must.Between(t, 0, r, 3)
		lower := strings.ToLower(candidate)
		must.Eq(t, r > 0, strings.Contains(lower, q))
		must.Eq(t, r == 1, lower == q)
	})
}
