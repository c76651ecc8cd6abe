package jobspec

import (
	"context"
	"fmt"
	"reflect"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
)

// rootSchema is everything allowed at the top level of a job file.
var rootSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "job", LabelNames: []string{"id"}},
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "locals"},
	},
}

// Parse parses the HCL2 job specification src into an api.Job.
//
// filename is used only in error messages. vars supplies values for the
// file's variable blocks; each string is converted to the variable's declared
// type. Every provided name must be declared, and every declared variable
// without a default must be provided.
//
// The returned error, when it comes from the HCL layer, is an hcl.Diagnostics
// whose text starts with "filename:line,col-col:"; use errors.As to inspect
// individual diagnostics. The job is not canonicalized.
//
// Parsing is bounded by DefaultLimits; a spec over any of them fails with a *LimitError
// (errors.Is(err, ErrLimit)) naming the limit.
func Parse(filename string, src []byte, vars map[string]string) (*api.Job, error) {
	return ParseContext(context.Background(), filename, src, vars)
}

// ParseContext is Parse that also stops, with a *LimitError, when ctx is done.
func ParseContext(ctx context.Context, filename string, src []byte, vars map[string]string) (*api.Job, error) {
	return ParseWithLimits(ctx, filename, src, vars, DefaultLimits)
}

// ParseWithLimits is ParseContext with limits other than DefaultLimits.
func ParseWithLimits(ctx context.Context, filename string, src []byte, vars map[string]string, lim Limits) (*api.Job, error) {
	return parseBounded(ctx, filename, src, vars, lim, nil)
}

// ParseLocal is Parse for a job file the CLI read on the user's own machine: the
// filesystem functions (file, filebase64, fileexists, fileset, abspath, pathexpand) work,
// with relative paths resolved against baseDir (the job file's directory). Parse, used by
// the agent for API callers, refuses them.
func ParseLocal(filename string, src []byte, vars map[string]string, baseDir string) (*api.Job, error) {
	return parseBounded(context.Background(), filename, src, vars, DefaultLimits, &fileAccess{baseDir: baseDir})
}

func parseBounded(ctx context.Context, filename string, src []byte, vars map[string]string, lim Limits, files *fileAccess) (*api.Job, error) {
	if lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lim.Timeout)
		defer cancel()
	}
	b := newBudget(ctx, lim)
	b.files = files
	job, err := parse(filename, src, vars, b)
	if b.err != nil {
		// The first limit wins over whatever the unwinding evaluation reported after it.
		return nil, b.err
	}
	return job, err
}

func parse(filename string, src []byte, vars map[string]string, b *budget) (*api.Job, error) {
	if err := checkSource("job spec", filename, src, b.lim); err != nil {
		return nil, err
	}
	if err := checkVariables(vars, b.lim); err != nil {
		return nil, err
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, errorsOnly(diags)
	}
	body := file.Body.(*hclsyntax.Body)

	// Must run before anything is evaluated: it rewrites the AST so that
	// client-side interpolations such as "${attr.kernel.name}" stay literal.
	if diags := keepRuntimeInterpolations(body, src); diags.HasErrors() {
		return nil, errorsOnly(diags)
	}
	// Also before anything is evaluated, and after the rewrite above so that the literals it
	// made are guarded like the rest.
	if diags := guardExpressions(body, b); diags.HasErrors() {
		return nil, errorsOnly(diags)
	}

	content, diags := body.Content(rootSchema)
	if diags.HasErrors() {
		return nil, errorsOnly(diags)
	}

	var jobBlock *hcl.Block
	var varBlocks, localBlocks []*hcl.Block
	for _, b := range content.Blocks {
		switch b.Type {
		case "job":
			if jobBlock != nil {
				return nil, hcl.Diagnostics{{
					Severity: hcl.DiagError,
					Summary:  "Duplicate job block",
					Detail: fmt.Sprintf("Only one job block is allowed in a file; the first was defined at %s.",
						jobBlock.DefRange),
					Subject: b.DefRange.Ptr(),
				}}
			}
			jobBlock = b
		case "variable":
			varBlocks = append(varBlocks, b)
		case "locals":
			localBlocks = append(localBlocks, b)
		}
	}
	if jobBlock == nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Missing job block",
			Detail:   `A job file must contain exactly one job "<id>" { ... } block.`,
			Subject:  body.MissingItemRange().Ptr(),
		}}
	}

	ctx, diags := evalContext(filename, varBlocks, localBlocks, vars, b)
	if diags.HasErrors() {
		return nil, errorsOnly(diags)
	}

	job := &api.Job{}
	if diags := decodeBody(jobBlock.Body, ctx, reflect.ValueOf(job).Elem()); diags.HasErrors() {
		return nil, errorsOnly(diags)
	}
	id := jobBlock.Labels[0]
	job.ID = &id
	if job.Name == nil {
		name := id
		job.Name = &name
	}
	return job, nil
}

// checkVariables bounds the variable values given, before any is parsed.
func checkVariables(vars map[string]string, lim Limits) error {
	if len(vars) > lim.MaxVariables {
		return &LimitError{Msg: fmt.Sprintf("%d variable values given, over the limit of %d", len(vars), lim.MaxVariables)}
	}
	total := 0
	for _, v := range vars {
		total += len(v)
	}
	if total > lim.MaxSourceBytes {
		return &LimitError{Msg: fmt.Sprintf("variable values are %d bytes, over the limit of %d", total, lim.MaxSourceBytes)}
	}
	return nil
}

// errorsOnly drops warnings so that the error text always starts with the
// first real error.
func errorsOnly(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d)
		}
	}
	return out
}
