package paginator

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-bexpr"
	"github.com/nomadfork/nomad/structs"
)

// Key is where a row sits in its list's order. Its String form is the row's next_token, in
// upstream's format: the parts joined with ".", which no namespace name contains.
type Key struct {
	kind      keyKind
	index     uint64
	namespace string
	id        string
}

type keyKind uint8

const (
	kindID keyKind = iota
	kindNamespaceID
	kindIndexID
)

// ByID orders rows by an ID or name alone (nodes, ACL policies and roles, namespaces, and any
// list asked for by ID prefix).
func ByID(id string) Key { return Key{kind: kindID, id: id} }

// ByNamespaceID orders rows by namespace, then ID (jobs): the token is "<namespace>.<id>".
func ByNamespaceID(namespace, id string) Key {
	return Key{kind: kindNamespaceID, namespace: namespace, id: id}
}

// ByCreateIndexID orders rows by the Raft index that created them, then ID (allocations,
// evaluations, ACL tokens, purge records): the token is "<create index>.<id>".
func ByCreateIndexID(index uint64, id string) Key {
	return Key{kind: kindIndexID, index: index, id: id}
}

func (k Key) String() string {
	switch k.kind {
	case kindNamespaceID:
		return k.namespace + "." + k.id
	case kindIndexID:
		return strconv.FormatUint(k.index, 10) + "." + k.id
	default:
		return k.id
	}
}

func (k Key) compare(o Key) int {
	return cmp.Or(cmp.Compare(k.index, o.index), cmp.Compare(k.namespace, o.namespace), cmp.Compare(k.id, o.id))
}

// parseToken reads a next_token as a key of kind. A token of the wrong shape is a 400 naming
// the parameter, not a silent restart from the first page.
func parseToken(kind keyKind, token string) (Key, error) {
	switch kind {
	case kindNamespaceID:
		ns, id, _ := strings.Cut(token, ".")
		return ByNamespaceID(ns, id), nil
	case kindIndexID:
		raw, id, _ := strings.Cut(token, ".")
		index, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return Key{}, structs.BadRequest("Invalid next_token %q: it must be <create index>.<id>", token)
		}
		return ByCreateIndexID(index, id), nil
	default:
		return ByID(token), nil
	}
}

// Order says how a list is sorted: the key of each row, and whether the list runs from the
// greatest key down when the caller does not ask for reverse (the purge history is newest
// first).
type Order[T any] struct {
	Key        func(T) Key
	Descending bool
}

// Page returns the page of rows that opts asks for (next_token, per_page, reverse, filter),
// as their wire form, and the token of the next page ("" on the last page). rows may come in
// any order; visible may be nil when the caller may see every row. A bad filter expression or
// token is a 400.
func Page[T, S any](rows []T, opts structs.QueryOptions, order Order[T], visible func(T) bool, stub func(T) (S, error)) ([]S, string, error) {
	filter, err := NewFilter(opts.Filter)
	if err != nil {
		return nil, "", err
	}
	if opts.PerPage < 0 {
		return nil, "", structs.BadRequest("Invalid per_page %d: it must not be negative", opts.PerPage)
	}
	keys := make([]Key, len(rows))
	idx := make([]int, len(rows))
	for i, r := range rows {
		keys[i], idx[i] = order.Key(r), i
	}
	descending := order.Descending != opts.Reverse
	slices.SortStableFunc(idx, func(a, b int) int {
		if descending {
			return keys[b].compare(keys[a])
		}
		return keys[a].compare(keys[b])
	})

	var start Key
	seek := opts.NextToken != "" && len(rows) > 0
	if seek {
		if start, err = parseToken(keys[0].kind, opts.NextToken); err != nil {
			return nil, "", err
		}
	}
	capacity := len(rows)
	if opts.PerPage > 0 {
		capacity = min(capacity, int(opts.PerPage))
	}
	out := make([]S, 0, capacity)
	for _, i := range idx {
		if seek {
			c := keys[i].compare(start)
			if (!descending && c < 0) || (descending && c > 0) {
				continue
			}
		}
		if visible != nil && !visible(rows[i]) {
			continue
		}
		s, err := stub(rows[i])
		if err != nil {
			return nil, "", err
		}
		ok, err := filter.Match(s)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			continue
		}
		if opts.PerPage > 0 && len(out) == int(opts.PerPage) {
			return out, keys[i].String(), nil
		}
		out = append(out, s)
	}
	return out, "", nil
}

// MaxFilterParseSteps bounds the size of one filter, counted as go-bexpr's parser counts
// (about 600 for `Status == "dead"` and 300 more per added clause, so some 300 clauses). Each
// clause runs on every listed row, so without a bound one long URL would cost the server rows
// × clauses work (the parser's own default is two million steps).
const MaxFilterParseSteps = 100_000

// Filter is a compiled filter expression; the zero value (no expression) matches everything.
type Filter struct {
	eval *bexpr.Evaluator
}

// NewFilter compiles expr. An expression that does not parse is a 400 that carries the
// parser's error, worded as upstream words it.
func NewFilter(expr string) (*Filter, error) {
	if expr == "" {
		return &Filter{}, nil
	}
	eval, err := bexpr.CreateEvaluator(expr, bexpr.WithMaxExpressions(MaxFilterParseSteps))
	if err != nil {
		return nil, structs.BadRequest("failed to create result paginator: failed to read filter expression: %v", err)
	}
	return &Filter{eval: eval}, nil
}

// Match evaluates the filter against v's JSON form, so selectors use the field names a client
// sees. An expression that cannot be applied to a row (an operator on the wrong kind of
// value, say) is a 400.
func (f *Filter) Match(v any) (bool, error) {
	if f == nil || f.eval == nil {
		return true, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return false, fmt.Errorf("filter: encoding a row: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	// Numbers stay exact (indexes are uint64); bexpr compares json.Number as a number.
	dec.UseNumber()
	var wire any
	if err := dec.Decode(&wire); err != nil {
		return false, fmt.Errorf("filter: decoding a row: %w", err)
	}
	if m, ok := wire.(map[string]any); ok {
		fillOmitted(m, reflect.TypeOf(v))
	}
	ok, err := f.eval.Evaluate(wire)
	if err != nil {
		return false, structs.BadRequest("failed to read result page: %v", err)
	}
	return ok, nil
}

// fillOmitted puts back the top-level fields that omitempty left out of a row, so a selector
// on a field that one row happens to leave empty (Meta, say) tests that row as empty instead
// of failing the whole request the way an unknown field does: a map comes back as {} and
// anything else as null.
func fillOmitted(m map[string]any, t reflect.Type) {
	for _, f := range omittable(t) {
		if _, ok := m[f.name]; ok {
			continue
		}
		if f.isMap {
			m[f.name] = map[string]any{}
		} else {
			m[f.name] = nil
		}
	}
}

type omittableField struct {
	name  string
	isMap bool
}

// omittableFields caches, per row type, the top-level fields tagged omitempty.
var omittableFields sync.Map

func omittable(t reflect.Type) []omittableField {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	if cached, ok := omittableFields.Load(t); ok {
		return cached.([]omittableField)
	}
	var out []omittableField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !strings.Contains(opts, "omitempty") {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, omittableField{name: name, isMap: f.Type.Kind() == reflect.Map})
	}
	omittableFields.Store(t, out)
	return out
}
