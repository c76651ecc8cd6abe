package state

import (
	"encoding"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

var updateSchema = flag.Bool("update", false, "record the persisted schema of this structs.SchemaVersion in testdata")

// The persisted schema is the msgpack shape of everything a data dir holds: the snapshot
// header, the row type of every memdb table, and the request type of every Raft message type,
// followed into every struct they reach (the official client's api types included), as the
// codec sees them: field keys (codec/json tags, embedded structs inlined, unexported and "-"
// fields skipped) and kinds. Pointers are left out: *T and T encode the same.
//
// It is written as one root per line ("root <what> = <type>") and one block per struct
// ("struct <name>" then "  <key> <type>"). A type is a kind (string, uint64, bytes, time,
// any, opaque(<name>) for a type that encodes itself), a struct reference {<name>}, or
// []T, [N]T, map[K]V.
type persistedSchema struct {
	roots   map[string]string
	structs map[string]map[string]string
}

func schemaFile(version int) string {
	return filepath.Join("testdata", fmt.Sprintf("schema-v%d.txt", version))
}

// TestPersistedSchema compares the schema of the persisted types with the one recorded for
// structs.SchemaVersion. A change an older data dir would decode wrongly (a field removed or
// renamed, a kind changed, a table or message type removed) fails unless the version was
// bumped, with a migration; an addition passes and asks for a re-record.
func TestPersistedSchema(t *testing.T) {
	current := derivePersistedSchema()
	must.Eq(t, structs.SchemaVersion, len(migrations),
		must.Sprintf("state/migrations.go needs one migration for every schema version below %d (from %d up), found %d",
			structs.SchemaVersion, legacySchemaVersion, len(migrations)))

	path := schemaFile(structs.SchemaVersion)
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		if !*updateSchema {
			t.Fatalf("%s does not exist: record it with `go test ./state -run TestPersistedSchema -update`", path)
		}
		must.NoError(t, os.WriteFile(path, []byte(current.String()), 0o644))
		t.Logf("recorded %s", path)
		return
	}
	must.NoError(t, err)
	recorded, err := parsePersistedSchema(string(raw))
	must.NoError(t, err)

	breaking, additions := compareSchemas(recorded, current)
	if len(breaking) > 0 {
		t.Fatalf("the persisted schema changed incompatibly with %s (schema version %d):\n  %s\n\n"+
			"Data dirs and snapshots written by earlier releases hold the recorded shape. Either undo the change, or:\n"+
			"  1. bump structs.SchemaVersion to %d;\n"+
			"  2. append to migrations in state/migrations.go a migration from %d that rewrites old rows into the new shape;\n"+
			"  3. give log entries a schema field (structs.EncodeEntry) so the FSM can migrate old entries too, if a message type changed;\n"+
			"  4. record %s with `go test ./state -run TestPersistedSchema -update` (keep %s: it is what the migration reads).",
			path, structs.SchemaVersion, strings.Join(breaking, "\n  "), structs.SchemaVersion+1, structs.SchemaVersion,
			schemaFile(structs.SchemaVersion+1), path)
	}
	if len(additions) == 0 {
		return
	}
	if *updateSchema {
		must.NoError(t, os.WriteFile(path, []byte(current.String()), 0o644))
		t.Logf("re-recorded %s with %d compatible additions", path, len(additions))
		return
	}
	// Additions are compatible: old data decodes with the new fields at their zero values.
	// Recording them is what makes a later removal of one of them fail here.
	t.Logf("the persisted schema has compatible additions; re-record %s with `go test ./state -run TestPersistedSchema -update`:\n  %s",
		path, strings.Join(additions, "\n  "))
}

// TestPersistedSchema_CatchesARename is the check's own test: renaming a field in the
// recorded schema (which is what a rename in the code looks like from the other side) is an
// incompatible change naming the field, and a new field is only an addition.
func TestPersistedSchema_CatchesARename(t *testing.T) {
	current := derivePersistedSchema()
	renamed := current.clone()
	fields := renamed.structs["structs.Job"]
	must.MapContainsKey(t, fields, "Priority")
	fields["Prio"] = fields["Priority"]
	delete(fields, "Priority")

	breaking, additions := compareSchemas(current, renamed)
	must.SliceNotEmpty(t, breaking)
	must.StrContains(t, strings.Join(breaking, "\n"), "structs.Job.Priority (via root entry 000): field removed or renamed")
	must.StrContains(t, strings.Join(additions, "\n"), "Prio")

	retyped := current.clone()
	retyped.structs["structs.Job"]["Priority"] = "string"
	breaking, _ = compareSchemas(current, retyped)
	must.StrContains(t, strings.Join(breaking, "\n"), "kind changed from int to string")

	breaking, additions = compareSchemas(renamed, current)
	must.SliceNotEmpty(t, breaking, must.Sprint("the rename read backwards removes Prio"))
	must.SliceNotEmpty(t, additions)

	// The text form reads back to the same schema.
	parsed, err := parsePersistedSchema(current.String())
	must.NoError(t, err)
	breaking, additions = compareSchemas(parsed, current)
	must.SliceEmpty(t, breaking)
	must.SliceEmpty(t, additions)
}

func (s *persistedSchema) clone() *persistedSchema {
	out := &persistedSchema{roots: map[string]string{}, structs: map[string]map[string]string{}}
	for k, v := range s.roots {
		out.roots[k] = v
	}
	for name, fields := range s.structs {
		out.structs[name] = map[string]string{}
		for k, v := range fields {
			out.structs[name][k] = v
		}
	}
	return out
}

func derivePersistedSchema() *persistedSchema {
	w := &schemaWalker{s: &persistedSchema{roots: map[string]string{}, structs: map[string]map[string]string{}}, names: map[string]reflect.Type{}}
	w.s.roots["snapshot header"] = w.typeExpr(reflect.TypeOf(snapshotHeader{}))
	for name, def := range tables {
		w.s.roots["table "+name] = w.typeExpr(def.rowType)
	}
	// Keyed by number, the persisted part: a message type's name is for logs.
	for mt, info := range structs.MessageTypes {
		w.s.roots[fmt.Sprintf("entry %03d", mt)] = w.typeExpr(reflect.TypeOf(info.New()))
	}
	return w.s
}

type schemaWalker struct {
	s     *persistedSchema
	names map[string]reflect.Type // schema name → the Go type that took it
}

var (
	selferType            = reflect.TypeOf((*codec.Selfer)(nil)).Elem()
	binaryMarshalerType   = reflect.TypeOf((*encoding.BinaryMarshaler)(nil)).Elem()
	binaryUnmarshalerType = reflect.TypeOf((*encoding.BinaryUnmarshaler)(nil)).Elem()
	timeType              = reflect.TypeOf(time.Time{})
)

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

// typeExpr is the schema type of t, walking into the structs it reaches. It follows the
// codec's choices for the msgpack handle: a Selfer encodes itself, time.Time is built in, and
// a type that marshals and unmarshals itself to binary does so.
func (w *schemaWalker) typeExpr(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return "time"
	case implements(t, selferType), implements(t, binaryMarshalerType) && implements(t, binaryUnmarshalerType):
		return "opaque(" + w.name(t) + ")"
	}
	switch t.Kind() {
	case reflect.Struct:
		name := w.name(t)
		if _, seen := w.s.structs[name]; !seen {
			fields := map[string]string{}
			w.s.structs[name] = fields // before the fields: a type may reach itself
			w.fields(t, fields, map[reflect.Type]bool{})
		}
		return "{" + name + "}"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return "[]" + w.typeExpr(t.Elem())
	case reflect.Array:
		return "[" + strconv.Itoa(t.Len()) + "]" + w.typeExpr(t.Elem())
	case reflect.Map:
		return "map[" + w.typeExpr(t.Key()) + "]" + w.typeExpr(t.Elem())
	case reflect.Interface:
		return "any"
	default:
		return t.Kind().String()
	}
}

// fields adds t's encoded fields to out the way the codec lays a struct out: exported fields
// under their codec (or json) tag name, untagged embedded structs inlined with the shallower
// field winning a name, unexported, "-" and func fields left out.
func (w *schemaWalker) fields(t reflect.Type, out map[string]string, inlining map[reflect.Type]bool) {
	var inline []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		switch f.Type.Kind() {
		case reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer, reflect.Chan:
			continue
		}
		tag := f.Tag.Get("codec")
		if tag == "" {
			tag = f.Tag.Get("json")
		}
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if !inlining[ft] && (f.IsExported() || f.Type.Kind() != reflect.Pointer) {
					inline = append(inline, ft)
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = w.typeExpr(f.Type)
	}
	for _, ft := range inline {
		sub := map[string]string{}
		inlining[ft] = true
		w.fields(ft, sub, inlining)
		delete(inlining, ft)
		for k, v := range sub {
			if _, taken := out[k]; !taken {
				out[k] = v
			}
		}
	}
}

// name is the schema name of a named type: its package's last element and its name, which
// must be unique among the persisted types.
func (w *schemaWalker) name(t reflect.Type) string {
	if t.Name() == "" {
		panic(fmt.Sprintf("persisted schema: anonymous struct %s: give it a name", t))
	}
	name := filepath.Base(t.PkgPath()) + "." + t.Name()
	if prev, ok := w.names[name]; ok && prev != t {
		panic(fmt.Sprintf("persisted schema: %s and %s share the name %s", prev.PkgPath(), t.PkgPath(), name))
	}
	w.names[name] = t
	return name
}

func (s *persistedSchema) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The persisted schema of structs.SchemaVersion %d: snapshot rows and log entry requests.\n", structs.SchemaVersion)
	b.WriteString("# Generated by `go test ./state -run TestPersistedSchema -update`; do not edit.\n")
	roots := make([]string, 0, len(s.roots))
	for k := range s.roots {
		roots = append(roots, k)
	}
	sort.Strings(roots)
	for _, k := range roots {
		fmt.Fprintf(&b, "root %s = %s\n", k, s.roots[k])
	}
	names := make([]string, 0, len(s.structs))
	for k := range s.structs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "struct %s\n", name)
		keys := make([]string, 0, len(s.structs[name]))
		for k := range s.structs[name] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s %s\n", k, s.structs[name][k])
		}
	}
	return b.String()
}

func parsePersistedSchema(text string) (*persistedSchema, error) {
	s := &persistedSchema{roots: map[string]string{}, structs: map[string]map[string]string{}}
	var current map[string]string
	for n, line := range strings.Split(text, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "root "):
			what, typ, ok := strings.Cut(strings.TrimPrefix(line, "root "), " = ")
			if !ok {
				return nil, fmt.Errorf("line %d: malformed root %q", n+1, line)
			}
			s.roots[what] = typ
		case strings.HasPrefix(line, "struct "):
			current = map[string]string{}
			s.structs[strings.TrimPrefix(line, "struct ")] = current
		case strings.HasPrefix(line, "  ") && current != nil:
			key, typ, ok := strings.Cut(strings.TrimPrefix(line, "  "), " ")
			if !ok {
				return nil, fmt.Errorf("line %d: malformed field %q", n+1, line)
			}
			current[key] = typ
		default:
			return nil, fmt.Errorf("line %d: unexpected %q", n+1, line)
		}
	}
	return s, nil
}

// compareSchemas walks old and new from each root in step, so a struct renamed in Go but
// encoded the same is no change. It returns the incompatible changes and the additions.
func compareSchemas(old, new *persistedSchema) (breaking, additions []string) {
	c := &schemaComparison{old: old, new: new, seen: map[[2]string]bool{}, reported: map[string]bool{}}
	roots := make([]string, 0, len(old.roots))
	for k := range old.roots {
		roots = append(roots, k)
	}
	sort.Strings(roots)
	for _, root := range roots {
		nt, ok := new.roots[root]
		if !ok {
			c.breaking("root "+root, "removed (a table or message type older data holds)")
			continue
		}
		c.root = root
		c.compare("root "+root, old.roots[root], nt)
	}
	for root := range new.roots {
		if _, ok := old.roots[root]; !ok {
			c.additions = append(c.additions, "root "+root+" added")
		}
	}
	sort.Strings(c.breakingList)
	sort.Strings(c.additions)
	return c.breakingList, c.additions
}

type schemaComparison struct {
	old, new     *persistedSchema
	root         string
	seen         map[[2]string]bool
	reported     map[string]bool
	breakingList []string
	additions    []string
}

func (c *schemaComparison) breaking(where, what string) {
	// One line per place, not per path that reaches it.
	if c.reported[where] {
		return
	}
	c.reported[where] = true
	c.breakingList = append(c.breakingList, fmt.Sprintf("%s (via root %s): %s", where, c.root, what))
}

func (c *schemaComparison) compare(where, ot, nt string) {
	switch {
	case strings.HasPrefix(ot, "{") && strings.HasPrefix(nt, "{"):
		on, nn := strings.Trim(ot, "{}"), strings.Trim(nt, "{}")
		if c.seen[[2]string{on, nn}] {
			return
		}
		c.seen[[2]string{on, nn}] = true
		of, nf := c.old.structs[on], c.new.structs[nn]
		keys := make([]string, 0, len(of))
		for k := range of {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := nf[k]; !ok {
				c.breaking(on+"."+k, "field removed or renamed")
				continue
			}
			c.compare(on+"."+k, of[k], nf[k])
		}
		for k := range nf {
			if _, ok := of[k]; !ok && !c.reported["+"+nn+"."+k] {
				c.reported["+"+nn+"."+k] = true
				c.additions = append(c.additions, fmt.Sprintf("%s.%s %s added", nn, k, nf[k]))
			}
		}
	case strings.HasPrefix(ot, "[]") && strings.HasPrefix(nt, "[]"):
		c.compare(where+"[]", ot[2:], nt[2:])
	case strings.HasPrefix(ot, "map[") && strings.HasPrefix(nt, "map["):
		ok, ov := splitMap(ot)
		nk, nv := splitMap(nt)
		c.compare(where+"{key}", ok, nk)
		c.compare(where+"{}", ov, nv)
	case strings.HasPrefix(ot, "[") && strings.HasPrefix(nt, "[") && !strings.HasPrefix(ot, "[]") && !strings.HasPrefix(nt, "[]"):
		oi, ni := strings.Index(ot, "]"), strings.Index(nt, "]")
		if ot[:oi] != nt[:ni] {
			c.breaking(where, fmt.Sprintf("array length changed from %s to %s", ot[:oi+1], nt[:ni+1]))
			return
		}
		c.compare(where+"[]", ot[oi+1:], nt[ni+1:])
	case ot != nt:
		c.breaking(where, fmt.Sprintf("kind changed from %s to %s", ot, nt))
	}
}

// splitMap splits "map[K]V" into K and V, K possibly holding brackets itself.
func splitMap(t string) (string, string) {
	depth := 0
	for i := len("map["); i < len(t); i++ {
		switch t[i] {
		case '[':
			depth++
		case ']':
			if depth == 0 {
				return t[len("map["):i], t[i+1:]
			}
			depth--
		}
	}
	return t, ""
}
