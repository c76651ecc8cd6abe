package jobspec

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
)

// The decoder is driven by the `hcl:"name,kind"` tags on the api structs:
// kind "optional" is an optional argument, no kind (or "attr") a required
// one, "block" a nested block and "label" a block label. Go types decide the
// block shape, see blockShape.

type fieldKind int

const (
	kindAttr fieldKind = iota
	kindBlock
	kindLabel
)

type blockShape int

const (
	shapeStruct    blockShape = iota // T or *T: at most one block
	shapeSlice                       // []T or []*T: any number of blocks
	shapeStructMap                   // map[string]*T: blocks keyed by their first label
	shapeAttrMap                     // map[string]V: a block of arguments, or `name = {...}`
	shapeFreeform                    // map[string]any: nested blocks become lists of maps
)

type field struct {
	name     string
	index    []int
	kind     fieldKind
	required bool
	shape    blockShape
	labels   []string // label names of the nested block
}

// structSpec is the HCL view of one api struct type.
type structSpec struct {
	schema *hcl.BodySchema
	attrs  []*field
	blocks map[string]*field
	labels []*field
	hook   *hook
}

var specCache sync.Map // reflect.Type -> *structSpec

// specFor returns the spec for struct type t. It panics on a tag or field
// type it does not understand: that is a programming error surfaced by
// TestSpecsCoverAPI whenever the api module gains a field of a new shape.
func specFor(t reflect.Type) *structSpec {
	if s, ok := specCache.Load(t); ok {
		return s.(*structSpec)
	}
	s := buildSpec(t)
	specCache.Store(t, s)
	return s
}

func buildSpec(t reflect.Type) *structSpec {
	h := hooks[t]
	hidden := map[string]bool{}
	if h != nil {
		for _, name := range h.hidden {
			hidden[name] = true
		}
	}

	s := &structSpec{schema: &hcl.BodySchema{}, blocks: map[string]*field{}, hook: h}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("hcl")
		if !ok || !sf.IsExported() {
			continue
		}
		name, kind, _ := strings.Cut(tag, ",")
		kind, _, _ = strings.Cut(kind, ",")
		f := &field{name: name, index: sf.Index}
		switch kind {
		case "", "attr":
			f.kind, f.required = kindAttr, true
		case "optional":
			f.kind = kindAttr
		case "block":
			f.kind = kindBlock
		case "label":
			f.kind = kindLabel
			if f.name == "" {
				f.name = strings.ToLower(sf.Name)
			}
		case "remain":
			continue
		default:
			panic(fmt.Sprintf("jobspec: %s.%s: unknown hcl tag kind %q", t, sf.Name, kind))
		}
		if hidden[f.name] && f.kind != kindLabel {
			continue
		}

		switch f.kind {
		case kindAttr:
			s.attrs = append(s.attrs, f)
			s.schema.Attributes = append(s.schema.Attributes,
				hcl.AttributeSchema{Name: f.name, Required: f.required})
		case kindLabel:
			s.labels = append(s.labels, f)
		case kindBlock:
			f.shape, f.labels = shapeOf(t, sf)
			s.blocks[f.name] = f
			s.schema.Blocks = append(s.schema.Blocks,
				hcl.BlockHeaderSchema{Type: f.name, LabelNames: f.labels})
			if f.shape == shapeAttrMap || f.shape == shapeFreeform {
				// meta { k = "v" } and meta = { k = "v" } are both common.
				s.schema.Attributes = append(s.schema.Attributes, hcl.AttributeSchema{Name: f.name})
			}
		}
	}
	if h != nil {
		s.schema.Attributes = append(s.schema.Attributes, h.extraAttrs...)
		s.schema.Blocks = append(s.schema.Blocks, h.extraBlocks...)
	}
	if len(s.schema.Blocks) > 0 {
		s.schema.Blocks = append(s.schema.Blocks,
			hcl.BlockHeaderSchema{Type: "dynamic", LabelNames: []string{"type"}})
	}
	return s
}

func shapeOf(parent reflect.Type, sf reflect.StructField) (blockShape, []string) {
	ft := sf.Type
	switch {
	case ft.Kind() == reflect.Map && ft.Key().Kind() == reflect.String:
		switch et := ft.Elem(); {
		case et.Kind() == reflect.Interface:
			return shapeFreeform, nil
		case structType(et) != nil:
			return shapeStructMap, labelNames(structType(et))
		default:
			return shapeAttrMap, nil
		}
	case ft.Kind() == reflect.Slice && structType(ft.Elem()) != nil:
		return shapeSlice, labelNames(structType(ft.Elem()))
	case structType(ft) != nil:
		return shapeStruct, labelNames(structType(ft))
	}
	panic(fmt.Sprintf("jobspec: %s.%s: unsupported block field type %s", parent, sf.Name, ft))
}

// structType returns the struct type t is or points to, else nil.
func structType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return t
	}
	return nil
}

// labelNames reads the label tags of t directly rather than through
// specFor, so that building a spec never recurses into itself.
func labelNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, kind, _ := strings.Cut(sf.Tag.Get("hcl"), ",")
		if kind != "label" {
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		names = append(names, name)
	}
	return names
}

// block is a block ready to decode: either written in the file or produced
// by a dynamic block, in which case ctx carries the iterator variable.
type block struct {
	*hcl.Block
	ctx *hcl.EvalContext
}

// decodeBody decodes body into dst, an addressable struct value.
func decodeBody(body hcl.Body, ctx *hcl.EvalContext, dst reflect.Value) hcl.Diagnostics {
	spec := specFor(dst.Type())
	content, diags := body.Content(spec.schema)
	if diags.HasErrors() {
		return diags
	}

	for _, f := range spec.attrs {
		if attr, ok := content.Attributes[f.name]; ok {
			diags = append(diags, decodeAttr(attr, ctx, dst.FieldByIndex(f.index))...)
		}
	}

	blocks, bdiags := expandDynamic(content.Blocks, ctx)
	diags = append(diags, bdiags...)

	extra := &extras{attrs: hcl.Attributes{}, ctx: ctx, body: body}
	if spec.hook != nil {
		for _, a := range spec.hook.extraAttrs {
			if attr, ok := content.Attributes[a.Name]; ok {
				extra.attrs[a.Name] = attr
			}
		}
	}

	seen := map[string]hcl.Range{}
	for _, b := range blocks {
		f, ok := spec.blocks[b.Type]
		if !ok {
			if spec.hook.hasExtraBlock(b.Type) {
				extra.blocks = append(extra.blocks, b)
				continue
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unsupported block type",
				Detail:   fmt.Sprintf("Blocks of type %q are not expected here.", b.Type),
				Subject:  b.TypeRange.Ptr(),
			})
			continue
		}
		if len(b.Labels) != len(f.labels) {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Wrong number of labels for %s", b.Type),
				Detail: fmt.Sprintf("A %s block needs %d label(s) (%s), not %d.",
					b.Type, len(f.labels), strings.Join(f.labels, ", "), len(b.Labels)),
				Subject: b.DefRange.Ptr(),
			})
			continue
		}
		diags = append(diags, decodeBlockField(f, b, dst.FieldByIndex(f.index), seen)...)
	}

	// Map-shaped blocks may instead be written as an argument.
	for _, f := range spec.blocks {
		if f.shape != shapeAttrMap && f.shape != shapeFreeform {
			continue
		}
		attr, ok := content.Attributes[f.name]
		if !ok {
			continue
		}
		if prev, dup := seen[f.name]; dup {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate %s definition", f.name),
				Detail:   fmt.Sprintf("%q is set both as an argument and as a block (at %s).", f.name, prev),
				Subject:  attr.NameRange.Ptr(),
			})
			continue
		}
		diags = append(diags, decodeAttr(attr, ctx, dst.FieldByIndex(f.index))...)
	}

	if diags.HasErrors() {
		return diags
	}
	if spec.hook != nil && spec.hook.after != nil {
		diags = append(diags, spec.hook.after(extra, dst.Addr().Interface())...)
	}
	return diags
}

func decodeAttr(attr *hcl.Attribute, ctx *hcl.EvalContext, dst reflect.Value) hcl.Diagnostics {
	val, diags := attr.Expr.Value(ctx)
	if diags.HasErrors() {
		return diags
	}
	if err := assign(val, dst); err != nil {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid value",
			Detail:   fmt.Sprintf("Inappropriate value for argument %q: %s.", attr.Name, err),
			Subject:  attr.Expr.Range().Ptr(),
		})
	}
	return diags
}

func decodeBlockField(f *field, b *block, dst reflect.Value, seen map[string]hcl.Range) hcl.Diagnostics {
	single := f.shape == shapeStruct || f.shape == shapeAttrMap || f.shape == shapeFreeform
	if single {
		if prev, dup := seen[b.Type]; dup {
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate %s block", b.Type),
				Detail:   fmt.Sprintf("Only one %s block is allowed here; another was defined at %s.", b.Type, prev),
				Subject:  b.DefRange.Ptr(),
			}}
		}
		seen[b.Type] = b.DefRange
	}

	switch f.shape {
	case shapeStruct:
		return decodeBlockInto(b, dst)

	case shapeSlice:
		elem := reflect.New(dst.Type().Elem()).Elem()
		diags := decodeBlockInto(b, elem)
		dst.Set(reflect.Append(dst, elem))
		return diags

	case shapeStructMap:
		key := reflect.ValueOf(b.Labels[0])
		if dst.IsNil() {
			dst.Set(reflect.MakeMap(dst.Type()))
		}
		if dst.MapIndex(key).IsValid() {
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate %s block", b.Type),
				Detail:   fmt.Sprintf("A %s block labelled %q was already defined.", b.Type, b.Labels[0]),
				Subject:  b.DefRange.Ptr(),
			}}
		}
		elem := reflect.New(dst.Type().Elem()).Elem()
		diags := decodeBlockInto(b, elem)
		dst.SetMapIndex(key, elem)
		return diags

	case shapeAttrMap:
		attrs, diags := b.Body.JustAttributes()
		if diags.HasErrors() {
			return diags
		}
		m := reflect.MakeMapWithSize(dst.Type(), len(attrs))
		for _, attr := range sortedAttributes(attrs) {
			v := reflect.New(dst.Type().Elem()).Elem()
			diags = append(diags, decodeAttr(attr, b.ctx, v)...)
			m.SetMapIndex(reflect.ValueOf(attr.Name), v)
		}
		dst.Set(m)
		return diags

	case shapeFreeform:
		m, diags := freeformBody(b.Body, b.ctx)
		dst.Set(reflect.ValueOf(m))
		return diags
	}
	return nil
}

// decodeBlockInto decodes b into dst, allocating when dst is a pointer.
func decodeBlockInto(b *block, dst reflect.Value) hcl.Diagnostics {
	if dst.Kind() == reflect.Pointer {
		p := reflect.New(dst.Type().Elem())
		dst.Set(p)
		dst = p.Elem()
	}
	for i, f := range specFor(dst.Type()).labels {
		lv := dst.FieldByIndex(f.index)
		label := b.Labels[i]
		switch {
		case lv.Kind() == reflect.String:
			lv.SetString(label)
		case lv.Kind() == reflect.Pointer && lv.Type().Elem().Kind() == reflect.String:
			p := reflect.New(lv.Type().Elem())
			p.Elem().SetString(label)
			lv.Set(p)
		default:
			panic(fmt.Sprintf("jobspec: label field %s has unsupported type %s", f.name, lv.Type()))
		}
	}
	return decodeBody(b.Body, b.ctx, dst)
}
