package nomad

import (
	"testing"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestPurgeHistory_NoCapabilityAnywhereIs403: a caller who holds the capability a purge
// history call needs in no namespace is refused with 403 whether the record exists or not,
// so that no answer tells them which record IDs exist. A caller holding it somewhere still
// learns a record is unknown (404) and is refused one of another namespace (403).
func TestPurgeHistory_NoCapabilityAnywhereIs403(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.Namespace.Upsert(&structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{{Name: "other"}},
		WriteRequest: structs.WriteRequest{AuthToken: mgmt}}, &gr))
	registerJob(t, srv, mgmt, mock.Job())
	var dr structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "web", Purge: true,
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &dr))
	records, err := srv.State().PurgeRecords(nil)
	must.NoError(t, err)
	must.Len(t, 1, records)
	known := records[0].ID
	const unknown = "00000000-0000-4000-8000-000000000000"

	nodeReader := clientToken(t, srv, mgmt, "node-reader", `node { policy = "read" }`).SecretID
	otherReader := clientToken(t, srv, mgmt, "other-reader", `namespace "other" { capabilities = ["read-job", "submit-job"] }`).SecretID

	get := func(token, id string) error {
		var reply structs.SinglePurgeRecordResponse
		return srv.Endpoints.PurgeRecord.GetRecord(&structs.PurgeRecordSpecificRequest{ID: id,
			QueryOptions: structs.QueryOptions{AuthToken: token}}, &reply)
	}
	restore := func(token, id string) error {
		var reply structs.JobRegisterResponse
		return srv.Endpoints.PurgeRecord.Restore(&structs.PurgeRecordRestoreRequest{ID: id,
			WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
	}
	list := func(token, ns string) ([]*structs.PurgeRecordStub, error) {
		var reply structs.PurgeRecordListResponse
		err := srv.Endpoints.PurgeRecord.List(&structs.PurgeRecordListRequest{
			QueryOptions: structs.QueryOptions{Namespace: ns, AuthToken: token}}, &reply)
		return reply.Records, err
	}
	denied := func(t *testing.T, err error) {
		t.Helper()
		must.ErrorIs(t, err, structs.ErrPermissionDenied)
		must.Eq(t, 403, structs.ErrorCode(err))
		must.StrHasPrefix(t, "Permission denied", err.Error())
	}

	for name, token := range map[string]string{"anonymous": "", "node reader": nodeReader} {
		t.Run(name, func(t *testing.T) {
			denied(t, get(token, unknown))
			denied(t, get(token, known))
			denied(t, restore(token, unknown))
			denied(t, restore(token, known))
			_, err := list(token, "*")
			denied(t, err)
			_, err = list(token, "")
			denied(t, err)
		})
	}

	t.Run("reader of another namespace", func(t *testing.T) {
		must.Eq(t, 404, structs.ErrorCode(get(otherReader, unknown)))
		denied(t, get(otherReader, known))
		must.Eq(t, 404, structs.ErrorCode(restore(otherReader, unknown)))
		denied(t, restore(otherReader, known))
		stubs, err := list(otherReader, "*")
		must.NoError(t, err)
		must.SliceEmpty(t, stubs)
		_, err = list(otherReader, "default")
		denied(t, err)
	})

	t.Run("management", func(t *testing.T) {
		must.Eq(t, 404, structs.ErrorCode(get(mgmt, unknown)))
		must.NoError(t, get(mgmt, known))
		stubs, err := list(mgmt, "*")
		must.NoError(t, err)
		must.Len(t, 1, stubs)
	})
}
