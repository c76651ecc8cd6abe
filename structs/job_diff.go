package structs

import (
	"encoding/base64"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
)

// The diff walks jobs by reflection so that a field added to the official client's types shows
// up in diffs without anyone touching this file. The shape rules, which clients such as
// `nomad job plan` and `nomad job history -p` render, are:
//
//   - primitive fields (and pointers to them) become a FieldDiff named by the Go field name,
//     with values rendered as strings; nil renders "", durations render as nanoseconds;
//   - maps of primitives become FieldDiffs named `Field[key]` on the enclosing level;
//   - structs and pointers to structs become an ObjectDiff named by the field;
//   - slices of primitives become an ObjectDiff named by the field holding one FieldDiff per
//     element, all named by the field, compared as a multiset;
//   - slices of structs become one ObjectDiff per element named by the singular of the field
//     ("Constraints" → "Constraint"), matched by Name when every element has a unique one and
//     otherwise compared as a multiset (a changed element is a Deleted plus an Added);
//   - maps of structs become one ObjectDiff per key named `Field[key]`;
//   - maps of arbitrary values (a task's Config) become an ObjectDiff named by the field whose
//     fields are the flattened keys: `command`, `args[0]`, `port_map[0][http]`;
//   - groups are matched by name into TaskGroups and tasks by name into Tasks. Every group and
//     task is listed, unchanged ones with Type None and no fields, as upstream does.
//
// Unchanged fields appear (as None) only in contextual mode; unchanged objects never appear.
// Everything is sorted by Name so the result is deterministic.

// jobDiffIgnored lists the top-level Job fields the server manages, which never express a
// change the submitter made, plus the fields the diff handles itself (ID, TaskGroups).
var jobDiffIgnored = map[string]bool{
	"ID":                true,
	"TaskGroups":        true,
	"Version":           true,
	"Status":            true,
	"StatusDescription": true,
	"Stable":            true,
	"SubmitTime":        true,
	"CreateIndex":       true,
	"ModifyIndex":       true,
	"JobModifyIndex":    true,
	"VersionTag":        true,
	"NomadTokenID":      true,
	"SubmittedBy":       true,
	"Payload":           true,
}

// groupDiffIgnored and taskDiffIgnored hold the fields the group and task levels handle
// themselves: the name is the match key and tasks are diffed as their own level.
var (
	groupDiffIgnored = map[string]bool{"Name": true, "Tasks": true}
	taskDiffIgnored  = map[string]bool{"Name": true}
)

// Diff returns the field-level difference from j (old) to other (new). contextual=true also
// includes unchanged fields (Type "None") like upstream's contextual diff.
func (j *Job) Diff(other *Job, contextual bool) (*JobDiff, error) {
	diff := &JobDiff{Type: DiffTypeNone}
	var oldGroups, newGroups []*api.TaskGroup
	switch {
	case j == nil && other == nil:
		return diff, nil
	case j == nil:
		diff.Type, diff.ID = DiffTypeAdded, other.ID
		newGroups = other.TaskGroups
	case other == nil:
		diff.Type, diff.ID = DiffTypeDeleted, j.ID
		oldGroups = j.TaskGroups
	default:
		if j.ID != other.ID {
			return nil, BadRequest("can not diff jobs with different IDs: %q and %q", j.ID, other.ID)
		}
		diff.ID = other.ID
		oldGroups, newGroups = j.TaskGroups, other.TaskGroups
	}

	d := differ{contextual: contextual}
	diff.Fields, diff.Objects = d.structLevel(structValue(j), structValue(other), jobDiffIgnored)
	diff.TaskGroups = d.groups(oldGroups, newGroups)

	if diff.Type == DiffTypeNone {
		changed := levelChanged(diff.Fields, diff.Objects)
		for _, tg := range diff.TaskGroups {
			changed = changed || tg.Type != DiffTypeNone
		}
		if changed {
			diff.Type = DiffTypeEdited
		}
	}
	return diff, nil
}

// differ carries the options of one diff through the walk.
type differ struct {
	contextual bool
}

// groups matches groups by name. A repeated name (rejected by validation) keeps the first.
func (d differ) groups(old, new []*api.TaskGroup) []*TaskGroupDiff {
	oldByName, newByName := indexByName(old, groupName), indexByName(new, groupName)
	var out []*TaskGroupDiff
	for _, name := range sortedKeys(oldByName, newByName) {
		o, n := oldByName[name], newByName[name]
		diff := &TaskGroupDiff{Type: presenceType(o != nil, n != nil), Name: name}
		diff.Fields, diff.Objects = d.structLevel(structValue(o), structValue(n), groupDiffIgnored)
		var oldTasks, newTasks []*api.Task
		if o != nil {
			oldTasks = o.Tasks
		}
		if n != nil {
			newTasks = n.Tasks
		}
		diff.Tasks = d.tasks(oldTasks, newTasks)
		if diff.Type == DiffTypeNone {
			changed := levelChanged(diff.Fields, diff.Objects)
			for _, t := range diff.Tasks {
				changed = changed || t.Type != DiffTypeNone
			}
			if changed {
				diff.Type = DiffTypeEdited
			}
		}
		out = append(out, diff)
	}
	return out
}

func (d differ) tasks(old, new []*api.Task) []*TaskDiff {
	oldByName, newByName := indexByName(old, taskName), indexByName(new, taskName)
	var out []*TaskDiff
	for _, name := range sortedKeys(oldByName, newByName) {
		o, n := oldByName[name], newByName[name]
		diff := &TaskDiff{Type: presenceType(o != nil, n != nil), Name: name}
		diff.Fields, diff.Objects = d.structLevel(structValue(o), structValue(n), taskDiffIgnored)
		if diff.Type == DiffTypeNone && levelChanged(diff.Fields, diff.Objects) {
			diff.Type = DiffTypeEdited
		}
		out = append(out, diff)
	}
	return out
}

func groupName(tg *api.TaskGroup) string { return stringValue(tg.Name) }
func taskName(t *api.Task) string        { return t.Name }

func indexByName[T any](items []*T, name func(*T) string) map[string]*T {
	out := make(map[string]*T, len(items))
	for _, it := range items {
		if it == nil {
			continue
		}
		if _, ok := out[name(it)]; !ok {
			out[name(it)] = it
		}
	}
	return out
}

// sortedKeys returns the keys present in either map, sorted.
func sortedKeys[V any](old, new map[string]V) []string {
	out := slices.Collect(maps.Keys(old))
	for k := range new {
		if _, ok := old[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// structLevel diffs two structs of the same type (either may be invalid, meaning absent) into
// the fields and objects of one level, skipping the named fields.
func (d differ) structLevel(old, new reflect.Value, skip map[string]bool) ([]*FieldDiff, []*ObjectDiff) {
	var l level
	t := typeOf(old, new)
	if t == nil {
		return nil, nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || skip[f.Name] || f.Tag.Get("json") == "-" || unsupportedKind(f.Type) {
			continue
		}
		d.value(&l, f.Name, f.Type, fieldOf(old, i), fieldOf(new, i))
	}
	l.sort()
	return l.fields, l.objects
}

// level accumulates what one struct, object or element contributes.
type level struct {
	fields  []*FieldDiff
	objects []*ObjectDiff
}

func (l *level) addField(f *FieldDiff) {
	if f != nil {
		l.fields = append(l.fields, f)
	}
}

func (l *level) addObject(o *ObjectDiff) {
	if o != nil {
		l.objects = append(l.objects, o)
	}
}

// sort orders by name; the sort is stable so same-named entries (set elements) keep the
// deterministic order in which they were produced.
func (l *level) sort() {
	sort.SliceStable(l.fields, func(a, b int) bool { return l.fields[a].Name < l.fields[b].Name })
	sort.SliceStable(l.objects, func(a, b int) bool { return l.objects[a].Name < l.objects[b].Name })
}

// value diffs one field of declared type t whose old and new values may be invalid (absent).
func (d differ) value(l *level, name string, t reflect.Type, old, new reflect.Value) {
	switch classify(t) {
	case shapePrimitive:
		l.addField(d.field(name, render(old), render(new)))
	case shapeStruct:
		l.addObject(d.object(name, deref(old), deref(new)))
	case shapePrimitiveSlice:
		l.addObject(d.primitiveSet(name, deref(old), deref(new)))
	case shapeStructSlice:
		for _, o := range d.structSlice(name, deref(old), deref(new)) {
			l.addObject(o)
		}
	case shapePrimitiveMap:
		o, n := deref(old), deref(new)
		for _, k := range mapKeys(o, n) {
			l.addField(d.field(name+"["+k+"]", render(mapIndex(o, k)), render(mapIndex(n, k))))
		}
	case shapeStructMap:
		o, n := deref(old), deref(new)
		for _, k := range mapKeys(o, n) {
			l.addObject(d.object(name+"["+k+"]", deref(mapIndex(o, k)), deref(mapIndex(n, k))))
		}
	case shapeFlatMap:
		o, n := deref(old), deref(new)
		var inner level
		for _, f := range d.flat("", o, n) {
			inner.addField(f)
		}
		l.addObject(d.finish(name, present(o), present(n), inner))
	default:
		for _, f := range d.flat(name, old, new) {
			l.addField(f)
		}
	}
}

// field compares two rendered values. Empty to non-empty is an addition and the reverse a
// deletion; unchanged fields are kept only in contextual mode.
func (d differ) field(name, old, new string) *FieldDiff {
	f := &FieldDiff{Name: name, Old: old, New: new}
	switch {
	case old == new:
		if !d.contextual {
			return nil
		}
		f.Type = DiffTypeNone
	case old == "":
		f.Type = DiffTypeAdded
	case new == "":
		f.Type = DiffTypeDeleted
	default:
		f.Type = DiffTypeEdited
	}
	return f
}

// object diffs two struct values (invalid when absent).
func (d differ) object(name string, old, new reflect.Value) *ObjectDiff {
	// Equal values cannot differ, and stopping here also keeps the walk off nil branches of
	// types that might nest themselves.
	if !old.IsValid() && !new.IsValid() || old.IsValid() && new.IsValid() && reflect.DeepEqual(old.Interface(), new.Interface()) {
		return nil
	}
	var l level
	l.fields, l.objects = d.structLevel(old, new, nil)
	return d.finish(name, old.IsValid(), new.IsValid(), l)
}

// finish types an object from whether each side exists and whether anything inside changed;
// an object with no change is dropped even in contextual mode, matching upstream.
func (d differ) finish(name string, hadOld, hasNew bool, l level) *ObjectDiff {
	if !levelChanged(l.fields, l.objects) {
		return nil
	}
	l.sort()
	typ := presenceType(hadOld, hasNew)
	if typ == DiffTypeNone {
		typ = DiffTypeEdited
	}
	return &ObjectDiff{Type: typ, Name: name, Fields: l.fields, Objects: l.objects}
}

// primitiveSet diffs two slices of primitives as multisets, one field per element.
func (d differ) primitiveSet(name string, old, new reflect.Value) *ObjectDiff {
	oldCount, newCount := map[string]int{}, map[string]int{}
	for i := range sliceLen(old) {
		oldCount[render(old.Index(i))]++
	}
	for i := range sliceLen(new) {
		newCount[render(new.Index(i))]++
	}
	var l level
	for _, v := range sortedKeys(oldCount, newCount) {
		common := min(oldCount[v], newCount[v])
		if d.contextual {
			for range common {
				l.addField(&FieldDiff{Type: DiffTypeNone, Name: name, Old: v, New: v})
			}
		}
		for range oldCount[v] - common {
			l.addField(&FieldDiff{Type: DiffTypeDeleted, Name: name, Old: v})
		}
		for range newCount[v] - common {
			l.addField(&FieldDiff{Type: DiffTypeAdded, Name: name, New: v})
		}
	}
	return d.finish(name, sliceLen(old) > 0, sliceLen(new) > 0, l)
}

// structSlice diffs two slices of structs element by element.
func (d differ) structSlice(field string, old, new reflect.Value) []*ObjectDiff {
	name := singular(field)
	olds, news := elements(old), elements(new)
	var out []*ObjectDiff
	add := func(o *ObjectDiff) {
		if o != nil {
			out = append(out, o)
		}
	}

	if keyField, ok := uniqueKeyField(olds, news); ok {
		oldByKey := map[string]reflect.Value{}
		for _, o := range olds {
			oldByKey[render(o.FieldByName(keyField))] = o
		}
		newByKey := map[string]reflect.Value{}
		for _, n := range news {
			newByKey[render(n.FieldByName(keyField))] = n
		}
		for _, k := range sortedKeys(oldByKey, newByKey) {
			o := d.object(name, oldByKey[k], newByKey[k])
			if o != nil && o.Type == DiffTypeEdited && !d.contextual {
				// An edited element keeps its key so the reader can tell which one changed.
				o.Fields = append(o.Fields, &FieldDiff{Type: DiffTypeNone, Name: keyField, Old: k, New: k})
				sortFields(o.Fields)
			}
			add(o)
		}
		return out
	}

	used := make([]bool, len(news))
	for _, o := range olds {
		matched := false
		for i, n := range news {
			if !used[i] && reflect.DeepEqual(o.Interface(), n.Interface()) {
				used[i], matched = true, true
				break
			}
		}
		if !matched {
			add(d.object(name, o, reflect.Value{}))
		}
	}
	for i, n := range news {
		if !used[i] {
			add(d.object(name, reflect.Value{}, n))
		}
	}
	return out
}

// uniqueKeyField picks the field that identifies elements when every element on both sides
// has a distinct, non-empty value for it.
func uniqueKeyField(olds, news []reflect.Value) (string, bool) {
	if len(olds)+len(news) == 0 {
		return "", false
	}
	t := slices.Concat(olds, news)[0].Type()
	for _, key := range []string{"Name", "Label"} {
		f, ok := t.FieldByName(key)
		if !ok || classify(f.Type) != shapePrimitive {
			continue
		}
		if distinctKeys(olds, key) && distinctKeys(news, key) {
			return key, true
		}
	}
	return "", false
}

func distinctKeys(items []reflect.Value, key string) bool {
	seen := map[string]bool{}
	for _, it := range items {
		k := render(it.FieldByName(key))
		if k == "" || seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// flat diffs values of no fixed shape (interfaces, nested slices and maps) by flattening each
// side to `prefix[key][index]` paths.
func (d differ) flat(prefix string, old, new reflect.Value) []*FieldDiff {
	oldFlat, newFlat := map[string]string{}, map[string]string{}
	flatten(prefix, old, oldFlat)
	flatten(prefix, new, newFlat)
	var out []*FieldDiff
	for _, k := range sortedKeys(oldFlat, newFlat) {
		if f := d.field(k, oldFlat[k], newFlat[k]); f != nil {
			out = append(out, f)
		}
	}
	return out
}

func flatten(prefix string, v reflect.Value, out map[string]string) {
	v = deref(v)
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "[" + k + "]"
	}
	switch {
	case !v.IsValid():
		if prefix != "" {
			out[prefix] = ""
		}
	case isPrimitive(v.Type()):
		out[prefix] = render(v)
	case v.Kind() == reflect.Map:
		for _, k := range mapKeys(v, reflect.Value{}) {
			flatten(join(k), mapIndex(v, k), out)
		}
	case v.Kind() == reflect.Slice || v.Kind() == reflect.Array:
		for i := range v.Len() {
			flatten(join(strconv.Itoa(i)), v.Index(i), out)
		}
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && !unsupportedKind(f.Type) {
				flatten(join(f.Name), v.Field(i), out)
			}
		}
	}
}

// shape is how a declared type is diffed.
type shape int

const (
	shapePrimitive shape = iota
	shapeStruct
	shapePrimitiveSlice
	shapeStructSlice
	shapePrimitiveMap
	shapeStructMap
	shapeFlatMap
	shapeFlat
)

func classify(t reflect.Type) shape {
	t = derefType(t)
	if isPrimitive(t) {
		return shapePrimitive
	}
	switch t.Kind() {
	case reflect.Struct:
		return shapeStruct
	case reflect.Slice, reflect.Array:
		switch e := derefType(t.Elem()); {
		case isPrimitive(e):
			return shapePrimitiveSlice
		case e.Kind() == reflect.Struct:
			return shapeStructSlice
		}
	case reflect.Map:
		switch e := derefType(t.Elem()); {
		case isPrimitive(e):
			return shapePrimitiveMap
		case e.Kind() == reflect.Struct:
			return shapeStructMap
		default:
			return shapeFlatMap
		}
	}
	return shapeFlat
}

var timeType = reflect.TypeFor[time.Time]()

func isPrimitive(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8
	}
	return t == timeType
}

func unsupportedKind(t reflect.Type) bool {
	switch derefType(t).Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	}
	return false
}

// render prints a primitive the way the diff shows it: integers in decimal (so durations are
// nanoseconds, as in the job's JSON), byte slices in base64 (as in JSON), nil as "".
func render(v reflect.Value) string {
	v = deref(v)
	if !v.IsValid() {
		return ""
	}
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Complex64, reflect.Complex128:
		return strconv.FormatComplex(v.Complex(), 'g', -1, 128)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return base64.StdEncoding.EncodeToString(v.Bytes())
		}
	}
	if v.Type() == timeType && v.CanInterface() {
		return v.Interface().(time.Time).Format(time.RFC3339Nano)
	}
	return ""
}

// deref follows pointers and interfaces; a nil along the way yields the invalid Value.
func deref(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// structValue turns a possibly nil pointer to a struct into a struct Value, invalid when nil.
func structValue[T any](p *T) reflect.Value {
	if p == nil {
		return reflect.Value{}
	}
	return reflect.ValueOf(p).Elem()
}

func typeOf(old, new reflect.Value) reflect.Type {
	switch {
	case old.IsValid():
		return old.Type()
	case new.IsValid():
		return new.Type()
	}
	return nil
}

func fieldOf(v reflect.Value, i int) reflect.Value {
	if !v.IsValid() {
		return reflect.Value{}
	}
	return v.Field(i)
}

func present(v reflect.Value) bool {
	return v.IsValid() && (v.Kind() != reflect.Map && v.Kind() != reflect.Slice || v.Len() > 0)
}

func sliceLen(v reflect.Value) int {
	if !v.IsValid() {
		return 0
	}
	return v.Len()
}

// elements returns the non-nil elements of a slice of structs, dereferenced.
func elements(v reflect.Value) []reflect.Value {
	var out []reflect.Value
	for i := range sliceLen(v) {
		if e := deref(v.Index(i)); e.IsValid() {
			out = append(out, e)
		}
	}
	return out
}

// mapKeys returns the rendered keys of either map, sorted.
func mapKeys(old, new reflect.Value) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []reflect.Value{old, new} {
		if !m.IsValid() {
			continue
		}
		for _, k := range m.MapKeys() {
			if s := render(k); !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}

// mapIndex looks a key up by its rendering, so maps keyed by non-string types work too.
func mapIndex(m reflect.Value, key string) reflect.Value {
	if !m.IsValid() {
		return reflect.Value{}
	}
	if m.Type().Key().Kind() == reflect.String {
		return m.MapIndex(reflect.ValueOf(key).Convert(m.Type().Key()))
	}
	iter := m.MapRange()
	for iter.Next() {
		if render(iter.Key()) == key {
			return iter.Value()
		}
	}
	return reflect.Value{}
}

// singular names one element of a plural field: Constraints → Constraint,
// Affinities → Affinity, ScalingPolicies → ScalingPolicy.
func singular(name string) string {
	switch {
	case len(name) > 3 && name[len(name)-3:] == "ies":
		return name[:len(name)-3] + "y"
	case len(name) > 1 && name[len(name)-1] == 's' && name[len(name)-2] != 's':
		return name[:len(name)-1]
	}
	return name
}

func presenceType(hadOld, hasNew bool) string {
	switch {
	case !hadOld && hasNew:
		return DiffTypeAdded
	case hadOld && !hasNew:
		return DiffTypeDeleted
	}
	return DiffTypeNone
}

func levelChanged(fields []*FieldDiff, objects []*ObjectDiff) bool {
	for _, f := range fields {
		if f.Type != DiffTypeNone {
			return true
		}
	}
	for _, o := range objects {
		if o.Type != DiffTypeNone {
			return true
		}
	}
	return false
}

func sortFields(fields []*FieldDiff) {
	sort.SliceStable(fields, func(a, b int) bool { return fields[a].Name < fields[b].Name })
}
