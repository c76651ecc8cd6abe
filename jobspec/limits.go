package jobspec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Limits bounds what parsing one job file may cost. The agent parses job files for any
// caller allowed to parse jobs, and HCL is a small programming language (for expressions,
// range(), format widths, template directives), so without a budget a few hundred bytes
// can ask for gigabytes. Every limit is far above what a hand-written job file needs; each
// one refused is reported as a *LimitError naming it.
type Limits struct {
	// MaxSourceBytes bounds the job file, the variables file and the sum of all given
	// variable values.
	MaxSourceBytes int
	// MaxVariables bounds how many variable values may be given.
	MaxVariables int
	// MaxNestingDepth bounds brackets, blocks, quotes, template sequences and directives
	// open at once in the source, and how deeply an evaluated value nests. The parser and
	// evaluator recurse once per level, so this also keeps their stacks small.
	MaxNestingDepth int
	// MaxExpressionChain bounds operators and postfix index steps chained in one
	// expression (a+b+c..., x[i][j]...): the parser builds them into a tree as deep as the
	// chain is long.
	MaxExpressionChain int
	// MaxCollection bounds the elements of any one list, set, tuple, map or object.
	MaxCollection int
	// MaxStringBytes bounds any one string an expression produces.
	MaxStringBytes int
	// MaxWork bounds evaluation steps: for-expression iterations, dynamic block
	// expansions and the elements of every value checked (each attribute's result, each
	// function's arguments and result).
	MaxWork int64
	// MaxTotalStringBytes bounds the string bytes produced over the whole evaluation.
	MaxTotalStringBytes int64
	// Timeout bounds wall time; it is checked between evaluation steps.
	Timeout time.Duration
}

// DefaultLimits are the limits Parse applies.
var DefaultLimits = Limits{
	MaxSourceBytes:      1 << 20,
	MaxVariables:        1000,
	MaxNestingDepth:     128,
	MaxExpressionChain:  1024,
	MaxCollection:       10_000,
	MaxStringBytes:      1 << 20,
	MaxWork:             1_000_000,
	MaxTotalStringBytes: 64 << 20,
	Timeout:             5 * time.Second,
}

// ErrLimit matches every *LimitError with errors.Is.
var ErrLimit = errors.New("job spec exceeds a limit")

// LimitError reports the first limit a parse ran into.
type LimitError struct {
	// Subject is where in the source the limit was reached, when known.
	Subject *hcl.Range
	// Msg names the limit, e.g. "collection of 1048576 elements is over the limit of 10000".
	Msg string
	// Eval is true for limits of evaluation (as opposed to the size of the input).
	Eval bool
}

func (e *LimitError) Error() string {
	prefix := "job spec exceeds a limit: "
	if e.Eval {
		prefix = "job spec exceeds the evaluation budget: "
	}
	if e.Subject != nil && e.Subject.Filename != "" {
		return fmt.Sprintf("%s: %s%s", e.Subject, prefix, e.Msg)
	}
	return prefix + e.Msg
}

func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// budget is the running cost of one parse. It is not safe for concurrent use: a parse is
// evaluated on one goroutine.
type budget struct {
	ctx   context.Context
	lim   Limits
	work  int64
	bytes int64
	// err is the first limit reached. Once set, every guarded evaluation returns an unknown
	// value at once, so the rest of the evaluation unwinds cheaply, and Parse returns err
	// whatever else went wrong (try() and can() swallow the diagnostic, not this).
	err *LimitError
	// files is where the filesystem functions may read; nil refuses them.
	files *fileAccess
}

func newBudget(ctx context.Context, lim Limits) *budget {
	return &budget{ctx: ctx, lim: lim}
}

// exhausted reports whether a limit has been reached.
func (b *budget) exhausted() bool { return b.err != nil }

// fail records the first limit reached and returns it as a diagnostic.
func (b *budget) fail(rng *hcl.Range, format string, args ...any) hcl.Diagnostics {
	if b.err == nil {
		b.err = &LimitError{Subject: rng, Msg: fmt.Sprintf(format, args...), Eval: true}
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Evaluation budget exceeded",
		Detail:   b.err.Msg,
		Subject:  rng,
	}}
}

// charge spends n steps of work and, every few thousand steps, checks the deadline.
func (b *budget) charge(n int64, rng *hcl.Range) hcl.Diagnostics {
	if b.err != nil {
		return b.fail(rng, "")
	}
	before := b.work
	b.work += n
	if b.work > b.lim.MaxWork {
		return b.fail(rng, "evaluation needs more than %d steps", b.lim.MaxWork)
	}
	if before>>12 != b.work>>12 || n == 0 {
		return b.checkDeadline(rng)
	}
	return nil
}

func (b *budget) checkDeadline(rng *hcl.Range) hcl.Diagnostics {
	if b.err != nil {
		return b.fail(rng, "")
	}
	if err := b.ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return b.fail(rng, "evaluation ran past its deadline (the limit is %s)", b.lim.Timeout)
		}
		return b.fail(rng, "evaluation was cancelled: %v", err)
	}
	return nil
}

// chargeString spends the bytes of a string produced by evaluation.
func (b *budget) chargeString(n int, rng *hcl.Range) hcl.Diagnostics {
	if n > b.lim.MaxStringBytes {
		return b.fail(rng, "string of %d bytes is over the limit of %d", n, b.lim.MaxStringBytes)
	}
	b.bytes += int64(n)
	if b.bytes > b.lim.MaxTotalStringBytes {
		return b.fail(rng, "evaluation produces more than %d bytes of strings", b.lim.MaxTotalStringBytes)
	}
	return nil
}

// chargeTemplate spends the n bytes of one template part, total being the length of the
// string the template has built so far.
func (b *budget) chargeTemplate(total, n int, rng *hcl.Range) hcl.Diagnostics {
	if total > b.lim.MaxStringBytes {
		return b.fail(rng, "string of %d bytes is over the limit of %d", total, b.lim.MaxStringBytes)
	}
	return b.chargeString(n, rng)
}

// checkCollection refuses a collection of n elements.
func (b *budget) checkCollection(n int, rng *hcl.Range) hcl.Diagnostics {
	if n > b.lim.MaxCollection {
		return b.fail(rng, "collection of %d elements is over the limit of %d", n, b.lim.MaxCollection)
	}
	return nil
}

// checkValue walks v, charging one step per element and the bytes of every string, and
// refuses it when a collection, a string or its depth is over the limits. The walk stops at
// the first limit, so its own cost is bounded by the budget.
func (b *budget) checkValue(v cty.Value, rng *hcl.Range) hcl.Diagnostics {
	return b.walk(v, 0, rng)
}

func (b *budget) walk(v cty.Value, depth int, rng *hcl.Range) hcl.Diagnostics {
	if depth > b.lim.MaxNestingDepth {
		return b.fail(rng, "value nests deeper than %d levels", b.lim.MaxNestingDepth)
	}
	if diags := b.charge(1, rng); diags != nil {
		return diags
	}
	v, _ = v.Unmark()
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return b.chargeString(len(v.AsString()), rng)
	case t.IsListType() || t.IsSetType() || t.IsTupleType() || t.IsMapType() || t.IsObjectType():
		if diags := b.checkCollection(v.LengthInt(), rng); diags != nil {
			return diags
		}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			if diags := b.walk(ev, depth+1, rng); diags != nil {
				return diags
			}
		}
	}
	return nil
}

// size measures v without charging string bytes: elements, string bytes and the largest
// collection, stopping once elements or bytes pass the given caps. Arguments are measured
// before a function runs, so that a tuple holding the same large string many times cannot
// reach a function that copies each, and so that a literal list written in the source is
// held to the collection limit like a computed one.
func (b *budget) size(v cty.Value, maxElems, maxBytes int64) (elems, bytes int64, widest int) {
	var visit func(v cty.Value)
	visit = func(v cty.Value) {
		if elems > maxElems || bytes > maxBytes {
			return
		}
		elems++
		v, _ = v.Unmark()
		if v.IsNull() || !v.IsKnown() {
			return
		}
		t := v.Type()
		switch {
		case t == cty.String:
			bytes += int64(len(v.AsString()))
		case t.IsListType() || t.IsSetType() || t.IsTupleType() || t.IsMapType() || t.IsObjectType():
			widest = max(widest, v.LengthInt())
			for it := v.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				visit(ev)
			}
		}
	}
	visit(v)
	return elems, bytes, widest
}
