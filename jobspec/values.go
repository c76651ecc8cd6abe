package jobspec

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"time"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

var durationType = reflect.TypeFor[time.Duration]()

// assign stores the HCL value v into dst. A null leaves dst untouched, so
// an unset pointer field stays nil and the caller's defaults still apply.
func assign(v cty.Value, dst reflect.Value) error {
	if v.IsNull() {
		return nil
	}
	if !v.IsWhollyKnown() {
		return errors.New("the value is not known while parsing")
	}

	t := dst.Type()
	if t == durationType {
		d, err := toDuration(v)
		if err != nil {
			return err
		}
		dst.SetInt(int64(d))
		return nil
	}

	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := assign(v, p.Elem()); err != nil {
			return err
		}
		dst.Set(p)

	case reflect.Interface:
		if x := CtyToGo(v); x != nil {
			dst.Set(reflect.ValueOf(x))
		}

	case reflect.String:
		s, err := convert.Convert(v, cty.String)
		if err != nil {
			return err
		}
		dst.SetString(s.AsString())

	case reflect.Bool:
		b, err := convert.Convert(v, cty.Bool)
		if err != nil {
			return err
		}
		dst.SetBool(b.True())

	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bf, err := toNumber(v)
		if err != nil {
			return err
		}
		i, acc := bf.Int64()
		if !bf.IsInt() {
			return errors.New("a whole number is required")
		}
		if acc != big.Exact || dst.OverflowInt(i) {
			return fmt.Errorf("%s is out of range", bf.Text('f', -1))
		}
		dst.SetInt(i)

	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bf, err := toNumber(v)
		if err != nil {
			return err
		}
		if !bf.IsInt() {
			return errors.New("a whole number is required")
		}
		u, acc := bf.Uint64()
		if acc != big.Exact || dst.OverflowUint(u) {
			return fmt.Errorf("%s is out of range", bf.Text('f', -1))
		}
		dst.SetUint(u)

	case reflect.Float32, reflect.Float64:
		bf, err := toNumber(v)
		if err != nil {
			return err
		}
		f, _ := bf.Float64()
		dst.SetFloat(f)

	case reflect.Slice:
		vt := v.Type()
		if !vt.IsListType() && !vt.IsSetType() && !vt.IsTupleType() {
			return errors.New("a list is required")
		}
		out := reflect.MakeSlice(t, 0, v.LengthInt())
		for i, it := 0, v.ElementIterator(); it.Next(); i++ {
			_, ev := it.Element()
			elem := reflect.New(t.Elem()).Elem()
			if err := assign(ev, elem); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
			out = reflect.Append(out, elem)
		}
		dst.Set(out)

	case reflect.Map:
		vt := v.Type()
		if t.Key().Kind() != reflect.String || (!vt.IsMapType() && !vt.IsObjectType()) {
			return errors.New("a map is required")
		}
		out := reflect.MakeMapWithSize(t, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			elem := reflect.New(t.Elem()).Elem()
			if err := assign(ev, elem); err != nil {
				return fmt.Errorf("key %q: %w", k.AsString(), err)
			}
			out.SetMapIndex(reflect.ValueOf(k.AsString()).Convert(t.Key()), elem)
		}
		dst.Set(out)

	default:
		return fmt.Errorf("cannot store a value in a %s", t)
	}
	return nil
}

func toNumber(v cty.Value) (*big.Float, error) {
	if v.Type() == cty.String && len(v.AsString()) > maxNumberText {
		return nil, fmt.Errorf("a number of at most %d characters is required", maxNumberText)
	}
	n, err := convert.Convert(v, cty.Number)
	if err != nil {
		return nil, err
	}
	return n.AsBigFloat(), nil
}

// toDuration accepts Go duration strings ("30s", "1h30m") and, because the
// JSON form of a job carries durations as integer nanoseconds, whole numbers.
func toDuration(v cty.Value) (time.Duration, error) {
	switch v.Type() {
	case cty.String:
		d, err := time.ParseDuration(v.AsString())
		if err != nil {
			return 0, fmt.Errorf("a duration such as \"30s\" is required: %w", err)
		}
		return d, nil
	case cty.Number:
		bf := v.AsBigFloat()
		if i, acc := bf.Int64(); bf.IsInt() && acc == big.Exact {
			return time.Duration(i), nil
		}
	}
	return 0, errors.New(`a duration such as "30s" is required`)
}

// CtyToGo converts a value for free-form maps (task config, scaling policy,
// agent plugin config): numbers become int when whole and float64 otherwise,
// the shapes drivers decode with mapstructure.
func CtyToGo(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		return goNumber(v.AsBigFloat())
	case t.IsListType() || t.IsSetType() || t.IsTupleType():
		out := make([]any, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			out = append(out, CtyToGo(ev))
		}
		return out
	case t.IsMapType() || t.IsObjectType():
		out := make(map[string]any, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			out[k.AsString()] = CtyToGo(ev)
		}
		return out
	}
	return nil
}

func goNumber(bf *big.Float) any {
	if bf.IsInt() {
		if i, acc := bf.Int64(); acc == big.Exact && i >= math.MinInt && i <= math.MaxInt {
			return int(i)
		}
	}
	f, _ := bf.Float64()
	return f
}
