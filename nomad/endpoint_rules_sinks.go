package nomad

// Rules of the event sink rows.

// sinkManagement allows only a management token (or ACLs off): a sink receives every event it
// selects, across namespaces and whatever the events' ACLs, and its secret signs for the
// cluster, so nothing less than management may register, read or remove one.
func sinkManagement[Req any](what string) func(*rpcCall, *Req) error {
	return management[Req](what)
}
