package structs

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// MaxFreeformDepth bounds how deeply a free-form value (task config, scaling policy,
// Connect proxy config: any field the job holds as map[string]any, []any or any) may nest.
//
// Every job is written to the Raft log as msgpack, whose decoder refuses values deeper than
// 1,024 levels; an entry it cannot decode stops every server that replays the log. The typed
// part of a job nests about twenty levels, so this limit keeps any accepted job far below the
// decoder's. The HTTP layer applies the same number to request bodies.
const MaxFreeformDepth = 128

// validateJobLimits refuses a job whose free-form values nest deeper than MaxFreeformDepth,
// naming the field. It is called from Job.Validate so that every way a job arrives (JSON,
// an HCL file parsed by the agent, RPC) is held to it.
func validateJobLimits(j *Job) error {
	return checkFreeformDepth(reflect.ValueOf(j), "job", 0)
}

// checkFreeformDepth walks v. free is 0 in the typed part of the job and, inside a free-form
// value, the depth reached within it; path is the typed path to the current value, which
// is the path reported (keys inside a free-form value are the submitter's own).
func checkFreeformDepth(v reflect.Value, path string, free int) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return checkFreeformDepth(v.Elem(), path, free)

	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if free == 0 {
			free = 1 // a bare `any` field is the root of a free-form value
		}
		return checkFreeformDepth(v.Elem(), path, free)

	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if !t.Field(i).IsExported() {
				continue
			}
			if err := checkFreeformDepth(v.Field(i), path+"."+t.Field(i).Name, free); err != nil {
				return err
			}
		}
		return nil

	case reflect.Map, reflect.Slice, reflect.Array:
		if !nests(v.Type().Elem()) {
			return nil // []byte, []string, map[string]string: one level, nothing inside
		}
		switch {
		case free > 0:
			free++
		case v.Type().Elem().Kind() == reflect.Interface:
			free = 1
		}
		if free > MaxFreeformDepth {
			return fmt.Errorf("%s nests deeper than %d levels", path, MaxFreeformDepth)
		}
		if v.Kind() == reflect.Map {
			for it := v.MapRange(); it.Next(); {
				p := path
				if free == 0 {
					p = fmt.Sprintf("%s[%q]", path, it.Key())
				}
				if err := checkFreeformDepth(it.Value(), p, free); err != nil {
					return err
				}
			}
			return nil
		}
		for i := 0; i < v.Len(); i++ {
			p := path
			if free == 0 {
				p = path + "[" + strconv.Itoa(i) + "]"
			}
			if err := checkFreeformDepth(v.Index(i), p, free); err != nil {
				return err
			}
		}
	}
	return nil
}

// nests reports whether values of type t can hold further values.
func nests(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer:
		return nests(t.Elem())
	case reflect.Interface, reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		return true
	}
	return false
}

// DefaultJobMaxTotalSize is server.job_max_total_size when unset: every stored version of one
// job together, as encoded in the Raft log and snapshots. Six versions of a job near the
// largest log entry (LogEntryMaxSize) would hold about 50 MiB of server memory per job ID.
const DefaultJobMaxTotalSize = 32 << 20

// JobVersionTagMaxDescription bounds a version tag's description, in bytes.
const JobVersionTagMaxDescription = 1024

// EncodedSize is how many bytes j takes encoded as the log and snapshots store it, counted
// without keeping the encoding.
func (j *Job) EncodedSize() (int64, error) {
	var w countingWriter
	if err := codec.NewEncoder(&w, MsgpackHandle).Encode(j); err != nil {
		return 0, fmt.Errorf("measuring job %q: %w", j.ID, err)
	}
	return int64(w), nil
}

type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}
