package agent

import (
	"reflect"
)

// named is implemented by list elements that merge by name.
type named interface{ configName() string }

func (p *PluginConfig) configName() string      { return p.Name }
func (v *HostVolumeConfig) configName() string  { return v.Name }
func (v *HostNetworkConfig) configName() string { return v.Name }

var namedType = reflect.TypeFor[named]()

// mergeStruct overlays the exported, non-zero fields of src onto dst, by
// the rules documented on Merge. Walking by reflection means a field added
// to any config struct merges without a change here.
func mergeStruct(dst, src reflect.Value) {
	for i := range src.NumField() {
		if src.Type().Field(i).IsExported() {
			mergeValue(dst.Field(i), src.Field(i))
		}
	}
}

func mergeValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.New(src.Type().Elem()))
		}
		mergeValue(dst.Elem(), src.Elem())
	case reflect.Struct:
		mergeStruct(dst, src)
	case reflect.Slice:
		if src.Len() == 0 {
			return
		}
		if !src.Type().Elem().Implements(namedType) {
			dst.Set(deepCopy(src))
			return
		}
		for i := range src.Len() {
			item := src.Index(i).Interface().(named)
			dst.Set(reflect.ValueOf(upsertNamed(dst.Interface(), item)))
		}
	case reflect.Map:
		if src.Len() == 0 {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMap(dst.Type()))
		}
		for iter := src.MapRange(); iter.Next(); {
			dst.SetMapIndex(iter.Key(), deepCopy(iter.Value()))
		}
	default:
		if !src.IsZero() {
			dst.Set(src)
		}
	}
}

// upsertNamed returns a copy of list (a []*PluginConfig or
// []*HostVolumeConfig) with a deep copy of item replacing the entry of the
// same name, or appended.
func upsertNamed(list any, item named) any {
	lv := reflect.ValueOf(list)
	out := reflect.MakeSlice(lv.Type(), 0, lv.Len()+1)
	replaced := false
	cp := deepCopy(reflect.ValueOf(item))
	for i := range lv.Len() {
		if lv.Index(i).Interface().(named).configName() == item.configName() {
			out = reflect.Append(out, cp)
			replaced = true
			continue
		}
		out = reflect.Append(out, lv.Index(i))
	}
	if !replaced {
		out = reflect.Append(out, cp)
	}
	return out.Interface()
}

// deepCopy copies pointers, slices, maps and interfaces recursively. Only
// exported struct fields are deep-copied; unexported ones are copied as is.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(deepCopy(v.Elem()))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(deepCopy(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for iter := v.MapRange(); iter.Next(); {
			out.SetMapIndex(iter.Key(), deepCopy(iter.Value()))
		}
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(deepCopy(v.Elem()))
		return out
	default:
		return v
	}
}

// ensure allocates a nested block on first write, for assignments.
func ensure[T any](p **T) *T {
	if *p == nil {
		*p = new(T)
	}
	return *p
}
