package jobspec

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// bomb2 is the parse bomb of security finding 6: two nested for expressions over
// range(1024) build a million-element value (40 s of CPU and 490 MB before the budget).
const bomb2 = `
locals {
  grid = [for i in range(1024) : [for j in range(1024) : "${i}-${j}"]]
}
job "bomb" {
  meta = { size = length(flatten(local.grid)) }
}
`

// bomb3 is the three-level variant (2.5 GB in 25 s before the budget).
const bomb3 = `
job "bomb" {
  meta = {
    x = jsonencode([for i in range(1024) : [for j in range(1024) : [for k in range(1024) : i + j + k]]])
  }
}
`

func jobWithMeta(expr string) string {
	return fmt.Sprintf("job \"j\" {\n  meta = { x = %s }\n}\n", expr)
}

// allocated returns the bytes allocated while running fn.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The bombs must be refused with an error naming the limit, having allocated a bounded
// amount (counting garbage; the live heap stays far smaller). Before the budget the nested
// loops ran for tens of seconds and allocated gigabytes, so the test fails on the error, the
// allocation bound or go test's -timeout.
func TestSecurity_ParseBombRefused(t *testing.T) {
	deepBlocks := strings.Repeat("a {\n", 1030) + strings.Repeat("}\n", 1030)
	cases := []struct {
		name string
		src  string
		vars map[string]string
		want string
	}{
		{name: "two nested for over range(1024)", src: bomb2, want: "evaluation needs more than 1000000 steps"},
		{name: "three nested for over range(1024)", src: bomb3, want: "evaluation needs more than 1000000 steps"},
		{name: "range over the collection limit", src: jobWithMeta("length(range(1048576))"),
			want: "range() would produce 1048576 elements, over the collection limit of 10000"},
		{name: "collection over the limit", src: jobWithMeta("length(flatten([for i in range(1024) : range(20)]))"),
			want: "collection of 20480 elements is over the limit of 10000"},
		{name: "setproduct", src: jobWithMeta("length(setproduct(range(1000), range(1000)))"),
			want: "setproduct() would produce more than 10000 elements"},
		{name: "format width", src: jobWithMeta(`format("%999999999d", 1)`),
			want: "format width 999999999 is over the string limit of 1048576"},
		{name: "replace with empty pattern", src: `
locals {
  s = join("", [for i in range(1000) : "xxxxxxxxxxxxxxxxxxxx"])
}
job "j" { meta = { x = replace(local.s, "", local.s) } }
`, want: "replace() could produce"},
		{name: "string doubling through locals", src: "locals {\n  s0 = \"xxxxxxxxxxxxxxxx\"\n" +
			func() string {
				var sb strings.Builder
				for i := 1; i <= 40; i++ {
					fmt.Fprintf(&sb, "  s%d = \"${local.s%d}${local.s%d}\"\n", i, i-1, i-1)
				}
				return sb.String()
			}() + "}\njob \"j\" { meta = { x = local.s40 } }\n",
			want: "string of 2097152 bytes is over the limit of 1048576"},
		{name: "nested dynamic blocks", src: `
job "j" {
  group "g" {
    dynamic "task" {
      for_each = range(1000)
      labels   = ["t${task.key}"]
      content {
        driver = "docker"
        dynamic "template" {
          for_each = range(1000)
          content { data = "x" }
        }
      }
    }
  }
}
`, want: "evaluation needs more than"},
		{name: "deeply nested blocks", src: "job \"j\" {\n group \"g\" {\n task \"t\" {\n driver = \"docker\"\n config {\n" +
			deepBlocks + "}\n}\n}\n}\n", want: "source nests deeper than 128 levels"},
		{name: "deeply nested brackets", src: jobWithMeta(strings.Repeat("[", 5000) + strings.Repeat("]", 5000)),
			want: "source nests deeper than 128 levels"},
		{name: "long operator chain", src: jobWithMeta(strings.Repeat("1+", 100000) + "1"),
			want: "expression chains more than 1024 operators or steps"},
		{name: "source too large", src: jobWithMeta(`"` + strings.Repeat("x", 2<<20) + `"`),
			want: "job spec is 2097184 bytes, over the limit of 1048576"},
		{name: "jsondecode nesting", src: jobWithMeta(`jsondecode("` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `")`),
			want: "jsondecode() input nests deeper than 128 levels"},
		{name: "function arguments repeating a large string", src: `
locals {
  big = join("", [for i in range(1000) : "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"])
}
job "j" { meta = { x = length(sort([` + strings.Repeat("local.big, ", 100) + `])) } }
`, want: "arguments of sort() hold more than 4194304 bytes of strings"},
		{name: "literal list over the collection limit", src: jobWithMeta("length([" + strings.Repeat("1,", 20000) + "1])"),
			want: "collection of 20001 elements is over the limit of 10000"},
		{name: "long number literal", src: "job \"j\" {\n  priority = " + strings.Repeat("1", 100000) + "\n}\n",
			want: "number literal is longer than 1000 characters"},
		{name: "try does not hide the limit", src: jobWithMeta(`try(length(range(1048576)), 0)`),
			want: "range() would produce 1048576 elements"},
		{name: "variable value bomb",
			src: "variable \"v\" {\n  type = list(list(number))\n}\njob \"j\" { meta = { x = length(var.v) } }\n",
			vars: map[string]string{"v": "[for i in [" + strings.Repeat("1,", 1024) + "1] : [for j in [" +
				strings.Repeat("1,", 1024) + "1] : j]]"},
			want: "evaluation needs more than"},
		{name: "too many variables", src: jobWithMeta(`"x"`),
			vars: func() map[string]string {
				m := map[string]string{}
				for i := range 1001 {
					m[fmt.Sprintf("v%d", i)] = "x"
				}
				return m
			}(), want: "1001 variable values given, over the limit of 1000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			bytes := allocated(func() { _, err = Parse("input.hcl", []byte(tc.src), tc.vars) })
			must.Error(t, err)
			must.ErrorIs(t, err, ErrLimit)
			var le *LimitError
			must.True(t, errors.As(err, &le))
			must.StrContains(t, err.Error(), tc.want)
			must.Less(t, uint64(768<<20), bytes, must.Sprintf("parse allocated %d MiB", bytes>>20))
		})
	}
}

// A job file of a realistic shape and size stays well inside the budget.
func TestSecurity_ParseBudgetAllowsRealJobs(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("locals {\n  ports = [for i in range(100) : \"p${i}\"]\n}\njob \"big\" {\n")
	for g := range 50 {
		fmt.Fprintf(&sb, "  group \"g%d\" {\n    count = 3\n    network {\n", g)
		sb.WriteString("      dynamic \"port\" {\n        for_each = local.ports\n        labels = [port.value]\n        content {}\n      }\n    }\n")
		for k := range 10 {
			fmt.Fprintf(&sb, "    task \"t%d\" {\n      driver = \"docker\"\n      config {\n        image = \"redis:7\"\n", k)
			sb.WriteString("        args = [for i in range(20) : format(\"--opt-%02d=%s\", i, upper(\"v\"))]\n      }\n")
			sb.WriteString("      template {\n        data = <<EOT\n" + strings.Repeat("line {{ env \"NOMAD_ALLOC_ID\" }}\n", 20) + "EOT\n        destination = \"local/x\"\n      }\n    }\n")
		}
		sb.WriteString("  }\n")
	}
	sb.WriteString("}\n")
	b := newBudget(context.Background(), DefaultLimits)
	job, err := parse("big.hcl", []byte(sb.String()), nil, b)
	must.NoError(t, err)
	t.Logf("source %d bytes, work %d, string bytes %d", sb.Len(), b.work, b.bytes)
	// Generous: a job far larger than usual (500 tasks, 5,000 generated ports) uses under
	// half of every budget.
	must.Less(t, DefaultLimits.MaxWork/2, b.work)
	must.Less(t, DefaultLimits.MaxTotalStringBytes/4, b.bytes)
	must.Len(t, 50, job.TaskGroups)
	must.Len(t, 100, job.TaskGroups[49].Networks[0].DynamicPorts)
	must.Len(t, 20, job.TaskGroups[49].Tasks[9].Config["args"].([]any))
}

// A done context stops the evaluation with an error naming why.
func TestSecurity_ParseStopsWhenContextDone(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	cases := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{name: "cancelled", ctx: cancelled, want: "evaluation was cancelled"},
		{name: "past the deadline", ctx: expired, want: "evaluation ran past its deadline (the limit is 5s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseContext(tc.ctx, "input.hcl", []byte(jobWithMeta(`"x"`)), nil)
			must.ErrorIs(t, err, ErrLimit)
			must.StrContains(t, err.Error(), tc.want)
		})
	}
}
