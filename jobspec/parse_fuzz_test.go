package jobspec

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// FuzzParse checks that any job file either parses or fails with an error, never a panic,
// and that a parse that fails on a limit reports a *LimitError. A tighter budget than the
// default keeps each input cheap, so the fuzzer explores the guards rather than waiting on
// them.
func FuzzParse(f *testing.F) {
	for _, path := range []string{"testdata/full.nomad.hcl", "testdata/example.nomad.hcl"} {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, src := range []string{
		bomb2, bomb3,
		jobWithMeta(`format("%5d|%-3s|%v", 1, "a", [1])`),
		jobWithMeta(`replace(join(",", [for s in ["a", "b"] : upper(s)]), "/[AB]/", "$0$0")`),
		jobWithMeta(`jsonencode(setproduct(["a"], range(3)))`),
		jobWithMeta(`try(regexall("a*", "aaa"), split("", "abc"), indent(2, "x\ny"))`),
		"job \"j\" {\n group \"g\" {\n dynamic \"task\" {\n for_each = range(3)\n labels = [\"t${task.key}\"]\n content { driver = \"d\" }\n }\n }\n}\n",
		"locals {\n a = \"x\"\n b = \"${local.a}${local.a}%{ if true }y%{ endif }\"\n}\njob \"j\" { meta = { b = local.b } }\n",
	} {
		f.Add([]byte(src))
	}
	lim := DefaultLimits
	lim.MaxWork = 20_000
	lim.MaxTotalStringBytes = 4 << 20
	lim.Timeout = 2 * time.Second

	f.Fuzz(func(t *testing.T, src []byte) {
		_, err := ParseWithLimits(context.Background(), "fuzz.hcl", src, nil, lim)
		var le *LimitError
		if errors.Is(err, ErrLimit) && !errors.As(err, &le) {
			t.Fatalf("ErrLimit without a *LimitError: %v", err)
		}
	})
}
