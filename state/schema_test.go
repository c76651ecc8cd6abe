package state

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

var updateSchemaGolden = flag.Bool("update-schema", false, "rewrite testdata/schema.golden from the current schema")

// TestSchema_Golden pins every table, index, Unique/AllowMissing flag, indexer type and
// indexed field, and row type. The schema decides what snapshots hold and which lookups are
// unique; a change to it must be deliberate, so the golden file is only rewritten with
// -update-schema.
func TestSchema_Golden(t *testing.T) {
	got := describeSchema()
	path := "testdata/schema.golden"
	if *updateSchemaGolden {
		must.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	must.NoError(t, err)
	must.EqOp(t, string(want), got)
}

func describeSchema() string {
	var b strings.Builder
	names := TableNames()
	sort.Strings(names)
	for _, name := range names {
		def := tables[name]
		fmt.Fprintf(&b, "table %s row=%s schema.Name=%s\n", name, def.rowType, def.schema.Name)
		idx := make([]string, 0, len(def.schema.Indexes))
		for k := range def.schema.Indexes {
			idx = append(idx, k)
		}
		sort.Strings(idx)
		for _, k := range idx {
			is := def.schema.Indexes[k]
			fmt.Fprintf(&b, "  index %s name=%s unique=%t allowMissing=%t indexer=%s\n",
				k, is.Name, is.Unique, is.AllowMissing, describeValue(reflect.ValueOf(is.Indexer)))
		}
	}
	return b.String()
}

// describeValue prints a value's type and exported fields recursively; functions are shown
// only as their type, since they cannot be compared.
func describeValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return "nil"
		}
		return describeValue(v.Elem())
	case reflect.Ptr:
		if v.IsNil() {
			return "nil"
		}
		return "&" + describeValue(v.Elem())
	case reflect.Func:
		return v.Type().String()
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = describeValue(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Struct:
		var parts []string
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			parts = append(parts, f.Name+":"+describeValue(v.Field(i)))
		}
		return v.Type().String() + "{" + strings.Join(parts, " ") + "}"
	default:
		return fmt.Sprintf("%v", v.Interface())
	}
}
