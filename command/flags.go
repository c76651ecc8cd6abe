package command

import (
	"fmt"
	"strconv"
	"strings"
)

// optUint is an unsigned flag that remembers whether it was given, for flags
// such as -version where 0 is a real value.
type optUint struct {
	v   uint64
	set bool
}

func (o *optUint) String() string {
	if !o.set {
		return ""
	}
	return strconv.FormatUint(o.v, 10)
}

func (o *optUint) Set(s string) error {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return err
	}
	o.v, o.set = v, true
	return nil
}

// varFlag collects repeated -var key=value flags.
type varFlag map[string]string

func (v varFlag) String() string { return "" }

func (v varFlag) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("invalid variable %q: expected key=value", s)
	}
	v[k] = val
	return nil
}

// stringsFlag collects a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string { return strings.Join(*s, ",") }

func (s *stringsFlag) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// optString is a string flag that remembers whether it was given, so that
// an update can tell "set to empty" from "leave alone".
type optString struct {
	v   string
	set bool
}

func (o *optString) String() string { return o.v }

func (o *optString) Set(s string) error {
	o.v, o.set = s, true
	return nil
}

// optBool is a boolean flag that remembers whether it was given, so that an update can tell
// "set to false" from "leave alone". It takes a value (-flag=true, -flag=false); -flag
// alone means true.
type optBool struct {
	v   bool
	set bool
}

func (o *optBool) String() string { return strconv.FormatBool(o.v) }

func (o *optBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	o.v, o.set = v, true
	return nil
}

// IsBoolFlag lets the flag package accept -flag without a value.
func (o *optBool) IsBoolFlag() bool { return true }
