// Package acl owns ACL policy documents and their evaluation: parsing and
// validating policy rules (HCL or HCL-JSON), and compiling a token's policies
// into an *ACL that answers "may this token do X?".
//
// The capability tables in capabilities.go are the single source of truth:
// validation and disposition expansion are derived from them, and a test fails
// when an exported capability constant is missing from its table.
//
// Invariants that must stay true:
//   - a nil *ACL denies everything (fail closed); "ACLs disabled" is the
//     explicit DisabledACL value, never a nil;
//   - a deny for a label beats every grant for that label, whatever the order
//     of policies;
//   - the package is pure: no I/O, no clocks.
//
// Imports: the standard library, hcl/v2 and go-cty only; nothing of ours, so
// every layer may depend on it.
package acl
