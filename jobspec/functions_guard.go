package jobspec

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// unguarded functions evaluate expressions they are given rather than values; the
// expressions inside them are guarded like any other.
var unguarded = map[string]bool{"can": true, "try": true}

// guardFunctions wraps every function so that its arguments are charged before it runs and
// its result is checked after, and, for the functions whose result can be far larger than
// their arguments (range, setproduct, format widths, replace with an empty pattern, ...),
// so that the size is estimated and refused before anything is allocated.
func guardFunctions(funcs map[string]function.Function, b *budget) map[string]function.Function {
	out := make(map[string]function.Function, len(funcs))
	for name, f := range funcs {
		if unguarded[name] {
			out[name] = f
			continue
		}
		out[name] = guardFunction(name, f, b)
	}
	return out
}

func guardFunction(name string, f function.Function, b *budget) function.Function {
	// The wrapper accepts anything and lets the real function apply its own rules about
	// unknown, null, dynamically typed and marked arguments.
	open := func(p function.Parameter) function.Parameter {
		p.AllowNull, p.AllowUnknown, p.AllowDynamicType, p.AllowMarked = true, true, true, true
		return p
	}
	params := f.Params()
	for i := range params {
		params[i] = open(params[i])
	}
	var varParam *function.Parameter
	if vp := f.VarParam(); vp != nil {
		p := open(*vp)
		varParam = &p
	}
	precheck := prechecks[name]
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      params,
		VarParam:    varParam,
		Type: func(args []cty.Value) (cty.Type, error) {
			return f.ReturnTypeForValues(args)
		},
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			if b.exhausted() {
				return cty.UnknownVal(retType), nil
			}
			// Arguments can hold the same large string many times over for the cost of a
			// reference each; functions that compare, hash or copy them pay for every copy.
			maxArgBytes := 4 * int64(b.lim.MaxStringBytes)
			var elems, bytes int64
			widest := 0
			for _, a := range args {
				n, m, w := b.size(a, b.lim.MaxWork, maxArgBytes)
				elems, bytes, widest = elems+n, bytes+m, max(widest, w)
			}
			if diags := b.charge(elems, nil); diags != nil {
				return cty.UnknownVal(retType), b.err
			}
			if diags := b.checkCollection(widest, nil); diags != nil {
				return cty.UnknownVal(retType), b.err
			}
			if bytes > maxArgBytes {
				b.fail(nil, "arguments of %s() hold more than %d bytes of strings", name, maxArgBytes)
				return cty.UnknownVal(retType), b.err
			}
			if precheck != nil && wholly(args) {
				if err := precheck(b, unmarked(args)); err != nil {
					var le *LimitError
					if errors.As(err, &le) {
						b.fail(nil, "%s", le.Msg)
						return cty.UnknownVal(retType), b.err
					}
					return cty.NilVal, err
				}
			}
			v, err := f.Call(args)
			if err != nil {
				return v, err
			}
			if diags := b.checkValue(v, nil); diags != nil {
				return cty.UnknownVal(retType), b.err
			}
			return v, nil
		},
	})
}

func wholly(args []cty.Value) bool {
	for _, a := range args {
		if !a.IsWhollyKnown() || a.IsNull() {
			return false
		}
	}
	return true
}

func unmarked(args []cty.Value) []cty.Value {
	out := make([]cty.Value, len(args))
	for i, a := range args {
		out[i], _ = a.UnmarkDeep()
	}
	return out
}

// over builds the error a precheck returns; guardFunction records it as the budget's.
func over(format string, args ...any) error {
	return &LimitError{Msg: fmt.Sprintf(format, args...), Eval: true}
}

// prechecks estimate, from known arguments, a result size that could not be refused after
// the fact because building it is the attack. The estimates are upper bounds.
var prechecks = map[string]func(b *budget, args []cty.Value) error{
	"range":      precheckRange,
	"setproduct": precheckSetproduct,
	"format":     func(b *budget, args []cty.Value) error { return precheckFormat(b, args, false) },
	"formatlist": func(b *budget, args []cty.Value) error { return precheckFormat(b, args, true) },
	"join":       precheckJoin,
	"jsonencode": precheckJSONEncode,
	"jsondecode": precheckJSONDecode,
	"replace":    precheckReplace,
	"regex_replace": func(b *budget, args []cty.Value) error {
		return precheckRegexReplace(b, args[0].AsString(), args[2].AsString())
	},
	"regexall":  precheckRegexAll,
	"split":     precheckSplit,
	"indent":    precheckIndent,
	"csvdecode": precheckCSV,
	"parseint":  precheckParseInt,
	"tonumber":  precheckToNumber,
}

func number(v cty.Value) float64 {
	f, _ := v.AsBigFloat().Float64()
	return f
}

func precheckRange(b *budget, args []cty.Value) error {
	var start, limit, step float64
	switch len(args) {
	case 1:
		limit = number(args[0])
	case 2:
		start, limit = number(args[0]), number(args[1])
	default:
		start, limit, step = number(args[0]), number(args[1]), number(args[2])
	}
	if len(args) < 3 {
		step = 1
		if limit < start {
			step = -1
		}
	}
	if step == 0 {
		return nil // range reports it
	}
	n := math.Ceil((limit - start) / step)
	if n > float64(b.lim.MaxCollection) || math.IsNaN(n) {
		return over("range() would produce %.0f elements, over the collection limit of %d", n, b.lim.MaxCollection)
	}
	return nil
}

func precheckSetproduct(b *budget, args []cty.Value) error {
	n := 1
	for _, a := range args {
		if !a.CanIterateElements() {
			return nil
		}
		n *= a.LengthInt()
		if n > b.lim.MaxCollection {
			return over("setproduct() would produce more than %d elements", b.lim.MaxCollection)
		}
		if n == 0 {
			return nil
		}
	}
	return nil
}

// formatVerbs counts the verbs of a format string and the largest width or precision any
// of them asks for.
func formatVerbs(f string) (verbs int, widest int) {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		verbs++
		num := 0
		for ; i < len(f); i++ {
			c := f[i]
			if c >= '0' && c <= '9' {
				if num < math.MaxInt32/10 {
					num = num*10 + int(c-'0')
				}
				widest = max(widest, num)
				continue
			}
			num = 0
			if strings.IndexByte("+-# .[]*", c) < 0 {
				break
			}
		}
	}
	return verbs, widest
}

func precheckFormat(b *budget, args []cty.Value, list bool) error {
	spec := args[0]
	if spec.Type() != cty.String {
		return nil
	}
	verbs, widest := formatVerbs(spec.AsString())
	if widest > b.lim.MaxStringBytes {
		return over("format width %d is over the string limit of %d", widest, b.lim.MaxStringBytes)
	}
	// An argument printed with %v can be a whole collection printed as JSON.
	var argBytes, rows int64 = 0, 1
	for _, a := range args[1:] {
		elems, bytes, _ := b.size(a, b.lim.MaxWork, b.lim.MaxTotalStringBytes)
		argBytes = max(argBytes, 2*bytes+24*elems)
		if list && (a.Type().IsListType() || a.Type().IsTupleType()) {
			rows = max(rows, int64(a.LengthInt()))
		}
	}
	est := int64(len(spec.AsString())) + int64(verbs)*(int64(widest)+argBytes)
	if !list && est > int64(b.lim.MaxStringBytes) {
		return over("format() could produce %d bytes, over the string limit of %d", est, b.lim.MaxStringBytes)
	}
	if list && rows*est > b.lim.MaxTotalStringBytes {
		return over("formatlist() could produce %d bytes, over the limit of %d", rows*est, b.lim.MaxTotalStringBytes)
	}
	return nil
}

func precheckJoin(b *budget, args []cty.Value) error {
	sep := int64(len(args[0].AsString()))
	var total int64
	for _, l := range args[1:] {
		elems, bytes, _ := b.size(l, b.lim.MaxWork, int64(b.lim.MaxStringBytes))
		total += bytes + sep*elems
	}
	if total > int64(b.lim.MaxStringBytes) {
		return over("join() would produce %d bytes, over the string limit of %d", total, b.lim.MaxStringBytes)
	}
	return nil
}

func precheckJSONEncode(b *budget, args []cty.Value) error {
	elems, bytes, _ := b.size(args[0], b.lim.MaxWork, int64(b.lim.MaxStringBytes))
	if est := 6*bytes + 24*elems; est > int64(b.lim.MaxStringBytes)*6 {
		return over("jsonencode() could produce %d bytes, over the string limit of %d", est, b.lim.MaxStringBytes)
	}
	return nil
}

// precheckJSONDecode refuses documents nested deeper than values may be (the decoder
// recurses per level) and charges one step per element before they are built.
func precheckJSONDecode(b *budget, args []cty.Value) error {
	depth, elems := jsonShape(args[0].AsString())
	if depth > b.lim.MaxNestingDepth {
		return over("jsondecode() input nests deeper than %d levels", b.lim.MaxNestingDepth)
	}
	if b.charge(elems, nil) != nil {
		return b.err
	}
	return nil
}

// jsonShape returns the deepest nesting of a JSON text and a bound on its element count,
// counting brackets and separators outside strings.
func jsonShape(s string) (maxDepth int, elems int64) {
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			elems++
			maxDepth = max(maxDepth, depth)
		case ']', '}':
			depth--
		case ',', ':':
			elems++
		}
	}
	return maxDepth, elems + 1
}

func precheckReplace(b *budget, args []cty.Value) error {
	str, substr, repl := args[0].AsString(), args[1].AsString(), args[2].AsString()
	if len(substr) > 1 && substr[0] == '/' && substr[len(substr)-1] == '/' {
		return precheckRegexReplace(b, str, repl)
	}
	n, r := int64(len(str)), int64(len(repl))
	est := n + (n/max(int64(len(substr)), 1)+1)*r
	if substr == "" {
		est = n + int64(utf8.RuneCountInString(str)+1)*r
	}
	if est > int64(b.lim.MaxStringBytes) {
		return over("replace() could produce %d bytes, over the string limit of %d", est, b.lim.MaxStringBytes)
	}
	return nil
}

// precheckRegexReplace bounds the result of replacing every match: at most len+1 matches
// each replaced by repl, plus, for each $ reference in repl, at most the input again
// (matches do not overlap).
func precheckRegexReplace(b *budget, str, repl string) error {
	n, r := int64(len(str)), int64(len(repl))
	est := n + (n+1)*r + int64(strings.Count(repl, "$"))*n
	if est > int64(b.lim.MaxStringBytes) {
		return over("regex_replace() could produce %d bytes, over the string limit of %d", est, b.lim.MaxStringBytes)
	}
	return nil
}

func precheckRegexAll(b *budget, args []cty.Value) error {
	re, err := regexp.Compile(args[0].AsString())
	if err != nil {
		return nil // regexall reports it
	}
	if m := re.FindAllStringIndex(args[1].AsString(), b.lim.MaxCollection+1); len(m) > b.lim.MaxCollection {
		return over("regexall() matches more than %d times, over the collection limit", b.lim.MaxCollection)
	}
	return nil
}

func precheckSplit(b *budget, args []cty.Value) error {
	if n := strings.Count(args[1].AsString(), args[0].AsString()) + 1; n > b.lim.MaxCollection {
		return over("split() would produce %d elements, over the collection limit of %d", n, b.lim.MaxCollection)
	}
	return nil
}

func precheckIndent(b *budget, args []cty.Value) error {
	spaces, str := number(args[0]), args[1].AsString()
	est := float64(len(str)) + spaces*float64(strings.Count(str, "\n")+1)
	if est > float64(b.lim.MaxStringBytes) {
		return over("indent() would produce %.0f bytes, over the string limit of %d", est, b.lim.MaxStringBytes)
	}
	return nil
}

func precheckCSV(b *budget, args []cty.Value) error {
	if n := strings.Count(args[0].AsString(), "\n"); n > b.lim.MaxCollection {
		return over("csvdecode() input has %d lines, over the collection limit of %d", n, b.lim.MaxCollection)
	}
	return nil
}

// maxNumberText bounds the digits of a number parsed from a string: arbitrary precision
// parsing is superlinear in the length, and no job needs a thousand digits.
const maxNumberText = 1000

func precheckParseInt(_ *budget, args []cty.Value) error {
	if args[0].Type() == cty.String && len(args[0].AsString()) > maxNumberText {
		return over("parseint() input is longer than %d characters", maxNumberText)
	}
	return nil
}

func precheckToNumber(_ *budget, args []cty.Value) error {
	if args[0].Type() == cty.String && len(args[0].AsString()) > maxNumberText {
		return over("tonumber() input is longer than %d characters", maxNumberText)
	}
	return nil
}
