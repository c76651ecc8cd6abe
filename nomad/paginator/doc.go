// Package paginator owns the paging and filtering every list RPC shares: the order of a list,
// the next_token that resumes it, per_page, reverse and the go-bexpr filter expression.
//
// It may import only structs from this module. A list endpoint reads its rows from state,
// then hands them to Page with how to order them, who may see which row and what a row looks
// like on the wire; it writes nothing.
//
// What must stay true:
//   - The filter sees each row exactly as the list returns it (its JSON field names, the same
//     shape a client decodes), so an expression can only test what the caller could read in
//     the answer anyway: a secret left out of a list stub cannot be probed through the filter.
//   - A row the caller may not see is skipped before the filter runs on it.
//   - A token is the key of the first row of the next page, so resuming after a row was
//     removed or added still starts at the right place.
package paginator
