package jepsen

import (
	"testing"

	"github.com/shoenig/test/must"
)

// srd is a stale read of key through server that saw value at index.
func srd(server, key, value string, index uint64, call, ret int64) Op {
	return Op{Server: server, Input: RegisterInput{Key: key, Kind: Read}, Output: RegisterOutput{Outcome: OK, Value: value, Index: index}, Call: call, Return: ret}
}

func TestCheckStale(t *testing.T) {
	writes := []Op{cas(0, "k", "", "a", OK, 0, 1), cas(0, "k", "a", "b", OK, 2, 3)}
	cases := []struct {
		name    string
		history []Op
		starts  map[string][]int64
		want    string // "" when the history keeps the guarantees
	}{
		{"an old value after a newer write was acknowledged is allowed", []Op{
			srd("s1", "k", "b", 20, 4, 5), srd("s2", "k", "a", 10, 6, 7), srd("s3", "k", "", 0, 8, 9),
		}, nil, ""},
		{"a value never written", []Op{srd("s1", "k", "z", 30, 4, 5)}, nil, `read "z" through s1 at 4: no write of that value`},
		{"a value before its write was called", []Op{
			srd("s1", "k", "c", 30, 4, 5), cas(0, "k", "b", "c", Unknown, 6, 7),
		}, nil, "written only at 6"},
		{"a refused write's value", []Op{
			cas(1, "k", "x", "r", Fail, 4, 5), srd("s1", "k", "r", 30, 6, 7),
		}, nil, "the write of it was refused"},
		{"a value whose write a full disk refused", []Op{
			cas(1, "k", "x", "r", Refused, 4, 5), srd("s1", "k", "r", 30, 6, 7),
		}, nil, "the write of it was refused"},
		{"one server going back in time", []Op{
			srd("s1", "k", "b", 20, 4, 5), srd("s1", "k", "a", 10, 6, 7),
		}, nil, "k through s1 went back: index 20"},
		{"overlapping reads of one server may see either order", []Op{
			srd("s1", "k", "b", 20, 4, 8), srd("s1", "k", "a", 10, 6, 7),
		}, nil, ""},
		{"a restarted server begins again", []Op{
			srd("s1", "k", "b", 20, 4, 5), srd("s1", "k", "a", 10, 7, 8),
		}, map[string][]int64{"s1": {6}}, ""},
		{"a value seen at two indexes", []Op{
			srd("s1", "k", "b", 20, 4, 5), srd("s2", "k", "b", 21, 4, 5),
		}, nil, `value "b" read at index 20 and at index 21`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckStale(append(append([]Op(nil), writes...), tc.history...), tc.starts)
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorIs(t, err, ErrStaleReadViolation)
			must.StrContains(t, err.Error(), tc.want)
		})
	}
}
