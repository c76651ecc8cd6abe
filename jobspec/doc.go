// Package jobspec turns Nomad job specifications into the official client
// type *api.Job.
//
// It owns the HCL2 job file format (variables, locals, functions, dynamic
// blocks and the mapping of HCL names onto api structs) and the JSON job
// format accepted by "nomad job run -json". The api struct tags (`hcl:"..."`)
// are the single source of truth for HCL names, so a field added to the
// client type becomes parseable without a change here; the few places where
// the HCL shape differs from the struct shape live in hooks.go.
//
// Parsing never canonicalizes: defaults are left for the caller to apply.
//
// Parsing is bounded (limits.go): the agent parses job files for API callers, and HCL's for
// expressions, functions and templates can ask for unbounded work from a few bytes. The
// source is size- and nesting-checked before the parser sees it, every evaluation is
// charged to a budget (guard.go, functions_guard.go), and a spec over any limit fails with
// a *LimitError naming it.
//
// Imports: hcl/v2, go-cty and github.com/hashicorp/nomad/api only; nothing
// else of ours, so both the CLI and the agent may depend on it.
package jobspec
