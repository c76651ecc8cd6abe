package structs

// ReconcileJobSummariesRequest recounts every job's summary from its allocations
// (`PUT /v1/system/reconcile/summaries`). Actor is who asked, set by the leader.
type ReconcileJobSummariesRequest struct {
	Actor *Actor
	WriteRequest
}
