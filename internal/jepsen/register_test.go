package jepsen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/shoenig/test/must"
)

func rd(client int, key, saw string, call, ret int64) Op {
	return Op{Client: client, Input: RegisterInput{Key: key, Kind: Read}, Output: RegisterOutput{Outcome: OK, Value: saw}, Call: call, Return: ret}
}

func cas(client int, key, old, new string, out Outcome, call, ret int64) Op {
	return Op{Client: client, Input: RegisterInput{Key: key, Kind: CAS, Old: old, New: new}, Output: RegisterOutput{Outcome: out}, Call: call, Return: ret}
}

func TestRegister_Histories(t *testing.T) {
	cases := []struct {
		name    string
		history []Op
		ok      bool
	}{
		{"sequential writes and reads", []Op{
			rd(0, "k", "", 0, 1), cas(0, "k", "", "a", OK, 2, 3), rd(1, "k", "a", 4, 5),
			cas(1, "k", "a", "b", OK, 6, 7), rd(0, "k", "b", 8, 9),
		}, true},
		{"a stale read after an acknowledged write", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(0, "k", "a", "b", OK, 2, 3), rd(1, "k", "a", 4, 5),
		}, false},
		{"a read concurrent with a write may see either value", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(0, "k", "a", "b", OK, 2, 10), rd(1, "k", "a", 3, 4), rd(2, "k", "b", 5, 6),
		}, true},
		{"two reads that see the values in opposite orders", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(0, "k", "a", "b", OK, 2, 10), rd(1, "k", "b", 3, 4), rd(2, "k", "a", 5, 6),
		}, false},
		{"two checks on the same value cannot both succeed", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(1, "k", "a", "b", OK, 2, 5), cas(2, "k", "a", "c", OK, 2, 5),
		}, false},
		{"a refused check while the value matched", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(1, "k", "a", "b", Fail, 2, 3), rd(1, "k", "a", 4, 5),
		}, false},
		{"a refused write is not seen", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(1, "k", "x", "b", Fail, 2, 3), rd(1, "k", "b", 4, 5),
		}, false},
		{"a write refused for a full disk says nothing about the value", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(1, "k", "a", "b", Refused, 2, 3), cas(2, "k", "a", "c", OK, 4, 5), rd(1, "k", "c", 6, 7),
		}, true},
		{"a write refused for a full disk is not seen", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(1, "k", "a", "b", Refused, 2, 3), rd(1, "k", "b", 4, 5),
		}, false},
		{"a write refused for a full disk did not happen later either", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(1, "k", "a", "b", Refused, 2, 3), rd(1, "k", "a", 4, 5), rd(1, "k", "b", 6, 7),
		}, false},
		{"an unknown write that happened later", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(1, "k", "a", "b", Unknown, 2, 3), rd(2, "k", "a", 10, 11), rd(2, "k", "b", 12, 13),
		}, true},
		{"an unknown write that never happened", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(1, "k", "a", "b", Unknown, 2, 3), rd(2, "k", "a", 10, 11),
		}, true},
		{"an unknown write cannot happen before its call", []Op{
			cas(0, "k", "", "a", OK, 0, 1), rd(2, "k", "b", 2, 3), cas(1, "k", "a", "b", Unknown, 4, 5),
		}, false},
		{"an unknown write seen, then unseen", []Op{
			cas(0, "k", "", "a", OK, 0, 1), cas(1, "k", "a", "b", Unknown, 2, 3), rd(2, "k", "b", 10, 11), rd(2, "k", "a", 12, 13),
		}, false},
		{"a read that did not answer says nothing", []Op{
			cas(0, "k", "", "a", OK, 0, 1),
			{Client: 1, Input: RegisterInput{Key: "k", Kind: Read}, Output: RegisterOutput{Outcome: Unknown}, Call: 2, Return: 3},
		}, true},
		{"keys are independent", []Op{
			cas(0, "k1", "", "a", OK, 0, 1), cas(0, "k2", "", "a", OK, 2, 3), rd(1, "k1", "a", 4, 5), rd(1, "k2", "a", 4, 5),
		}, true},
		{"a lost write on one key among good ones", []Op{
			cas(0, "k1", "", "a", OK, 0, 1), cas(0, "k2", "", "a", OK, 2, 3), rd(1, "k1", "a", 4, 5), rd(1, "k2", "", 4, 5),
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(tc.history, 10*time.Second)
			if tc.ok {
				must.NoError(t, err)
			} else {
				must.ErrorIs(t, err, ErrNotLinearizable)
			}
		})
	}
}

func TestRegister_FailingKeys(t *testing.T) {
	h := []Op{
		cas(0, "k1", "", "a", OK, 0, 1), cas(0, "k2", "", "a", OK, 2, 3), rd(1, "k1", "a", 4, 5), rd(1, "k2", "", 4, 5),
	}
	must.Eq(t, []string{"k2"}, FailingKeys(h, 10*time.Second))
}

// A check that runs out of time is a failure, not a pass.
func TestRegister_TimedOutCheckFails(t *testing.T) {
	// Many concurrent unknown writes on one key make the search large enough not to finish
	// in a nanosecond.
	var h []Op
	for i := 0; i < 200; i++ {
		h = append(h, cas(i, "k", "", string(rune('a'+i%26))+string(rune('a'+i/26)), Unknown, 0, 1))
	}
	h = append(h, rd(999, "k", "zz", 2, 3))
	_, err := Check(h, time.Nanosecond)
	must.ErrorIs(t, err, ErrCheckTimedOut)
}

func TestRegister_SaveWritesHistoryAndVisualisation(t *testing.T) {
	h := []Op{cas(0, "k", "", "a", OK, 0, 1), rd(1, "k", "", 2, 3)}
	info, err := Check(h, 10*time.Second)
	must.ErrorIs(t, err, ErrNotLinearizable)
	dir := filepath.Join(t.TempDir(), "out")
	html, err := Save(dir, "history", RegisterModel, h, info, []porcupine.Annotation{{Tag: "nemesis", Start: 0, End: 2, Description: "kill s1"}})
	must.NoError(t, err)
	page, err := os.ReadFile(html)
	must.NoError(t, err)
	must.StrContains(t, string(page), "kill s1")
	js, err := os.ReadFile(filepath.Join(dir, "history.json"))
	must.NoError(t, err)
	must.True(t, strings.Contains(string(js), `"kind": "cas"`))
}
