package nomad

import (
	"testing"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestPurgeHistory_Verify: purges by API and by GC chain into one history that verifies, with
// the newest record's hash as its head; a caller without read-job anywhere is refused.
func TestPurgeHistory_Verify(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	for _, id := range []string{"a", "b"} {
		registerJob(t, srv, mgmt, mock.JobWithID(id))
		var dr structs.JobDeregisterResponse
		must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: id, Purge: true,
			WriteRequest: structs.WriteRequest{AuthToken: mgmt}}, &dr))
	}
	registerJob(t, srv, mgmt, mock.JobWithID("c"))
	var dr structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "c",
		WriteRequest: structs.WriteRequest{AuthToken: mgmt}}, &dr))
	_, err := srv.runJobGC(true, nil)
	must.NoError(t, err)

	reader := clientToken(t, srv, mgmt, "reader", `namespace "default" { policy = "read" }`)
	var got structs.PurgeChainVerifyResponse
	must.NoError(t, srv.Endpoints.PurgeRecord.Verify(&structs.PurgeChainVerifyRequest{
		QueryOptions: structs.QueryOptions{AuthToken: reader.SecretID}}, &got))
	must.True(t, got.Valid)
	must.Eq(t, 3, got.Records)
	records, err := srv.State().PurgeRecords(nil)
	must.NoError(t, err)
	must.Eq(t, records[0].Hash, got.Head)
	must.Eq(t, uint64(3), records[0].ChainSeq)

	nodeReader := clientToken(t, srv, mgmt, "node-reader", `node { policy = "read" }`)
	err = srv.Endpoints.PurgeRecord.Verify(&structs.PurgeChainVerifyRequest{
		QueryOptions: structs.QueryOptions{AuthToken: nodeReader.SecretID}}, &got)
	must.Eq(t, 403, structs.ErrorCode(err))
	must.StrContains(t, err.Error(), "read-job")
}
