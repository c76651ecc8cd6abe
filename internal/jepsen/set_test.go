package jepsen

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func add(client int, x string, out Outcome, call, ret int64) SetOp {
	return SetOp{Client: client, Add: true, Element: x, Outcome: out, Call: call, Return: ret}
}

func list(client int, saw []string, call, ret int64) SetOp {
	return SetOp{Client: client, Elements: saw, Outcome: OK, Call: call, Return: ret}
}

func TestSet_Histories(t *testing.T) {
	cases := []struct {
		name    string
		history []SetOp
		ok      bool
	}{
		{"adds then a read that sees them, in any order", []SetOp{
			add(0, "a", OK, 0, 1), add(1, "b", OK, 0, 2), list(2, []string{"b", "a"}, 3, 4),
		}, true},
		{"an acknowledged add missing from a later read", []SetOp{
			add(0, "a", OK, 0, 1), add(1, "b", OK, 0, 2), list(2, []string{"a"}, 3, 4),
		}, false},
		{"a concurrent add may or may not be seen", []SetOp{
			add(0, "a", OK, 0, 10), list(1, nil, 1, 2), list(2, []string{"a"}, 3, 4),
		}, true},
		{"seen, then unseen", []SetOp{
			add(0, "a", OK, 0, 10), list(1, []string{"a"}, 1, 2), list(2, nil, 3, 4),
		}, false},
		{"an element never added", []SetOp{
			add(0, "a", OK, 0, 1), list(1, []string{"a", "z"}, 2, 3),
		}, false},
		{"a refused add that shows up", []SetOp{
			add(0, "a", Fail, 0, 1), list(1, []string{"a"}, 2, 3),
		}, false},
		{"an add refused for a full disk that shows up", []SetOp{
			add(0, "a", Refused, 0, 1), list(1, []string{"a"}, 2, 3),
		}, false},
		{"an unknown add seen late", []SetOp{
			add(0, "a", Unknown, 0, 1), list(1, nil, 2, 3), list(1, []string{"a"}, 4, 5),
		}, true},
		{"an unknown add seen before its call", []SetOp{
			list(1, []string{"a"}, 0, 1), add(0, "a", Unknown, 2, 3),
		}, false},
		{"an unknown add seen, then unseen", []SetOp{
			add(0, "a", Unknown, 0, 1), list(1, []string{"a"}, 2, 3), list(1, nil, 4, 5),
		}, false},
		{"many unknown adds, few seen, check quickly", manyUnknown(), true},
		{"an unknown add never seen", []SetOp{
			add(0, "a", Unknown, 0, 1), add(0, "b", OK, 2, 3), list(1, []string{"b"}, 4, 5),
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckSet(tc.history, 10*time.Second)
			if tc.ok {
				must.NoError(t, err)
			} else {
				must.ErrorIs(t, err, ErrNotLinearizable)
			}
		})
	}
}

// manyUnknown is 500 unknown adds, one in ten seen by the final read: a history the open end
// made porcupine time out on.
func manyUnknown() []SetOp {
	var h []SetOp
	var seen []string
	for i := 0; i < 500; i++ {
		x := "e" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		h = append(h, add(i%8, x, Unknown, int64(i), int64(i)+1))
		h = append(h, list(8+i%8, seen, int64(i), int64(i)+1))
		if i%10 == 0 {
			seen = append(seen, x)
		}
	}
	return append(h, list(99, seen, 1000, 1001))
}
