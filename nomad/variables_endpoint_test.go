package nomad

import (
	"bytes"
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func putVariable(srv *Server, token string, op structs.VarOp, v *structs.VariableDecrypted) (*structs.VariablesApplyResponse, error) {
	var reply structs.VariablesApplyResponse
	err := srv.Endpoints.Variables.Apply(&structs.VariablesApplyRequest{
		Op: op, Var: v, WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: token},
	}, &reply)
	return &reply, err
}

func newVar(path string, items map[string]string) *structs.VariableDecrypted {
	return &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: path}, Items: items}
}

// The items are ciphertext in the Raft entry's result, the state store and the snapshot;
// only the endpoint's answers hold them in clear.
func TestVariables_EncryptedAtRest(t *testing.T) {
	srv := testServer(t, nil)
	const secret = "hunter2-very-secret"
	out, err := putVariable(srv, "", structs.VarOpSet, newVar("app/db", map[string]string{"password": secret}))
	must.NoError(t, err)
	must.Eq(t, secret, out.Output.Items["password"])
	must.Positive(t, out.Output.CreateTime)

	row, err := srv.State().VariableByPath(nil, "default", "app/db")
	must.NoError(t, err)
	must.NotNil(t, row)
	must.False(t, bytes.Contains(row.Data, []byte(secret)))
	keys, err := srv.State().RootKeys(nil)
	must.NoError(t, err)
	must.Eq(t, keys[len(keys)-1].KeyID, row.KeyID)

	snap, err := srv.fsm.Snapshot()
	must.NoError(t, err)
	var sink memSink
	must.NoError(t, snap.Persist(&sink))
	must.False(t, bytes.Contains(sink.Bytes(), []byte(secret)), must.Sprint("the snapshot holds the item in clear"))

	var read structs.VariablesReadResponse
	must.NoError(t, srv.Endpoints.Variables.Read(&structs.VariablesReadRequest{Path: "app/db",
		QueryOptions: structs.QueryOptions{Namespace: "default"}}, &read))
	must.NotNil(t, read.Data)
	must.Eq(t, map[string]string{"password": secret}, read.Data.Items)

	// Ciphertext moved to another path does not open: the path is the additional data.
	moved := *row
	moved.Path = "app/other"
	_, err = srv.decryptVariable(&moved)
	must.ErrorContains(t, err, "decrypting")
	// Nor does tampered ciphertext.
	tampered := *row
	tampered.Data = bytes.Clone(row.Data)
	tampered.Data[len(tampered.Data)-1] ^= 1
	_, err = srv.decryptVariable(&tampered)
	must.ErrorContains(t, err, "decrypting")
}

func TestVariables_ACL(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	_, err := putVariable(srv, mgmt, structs.VarOpSet, newVar("app/db", map[string]string{"k": "v"}))
	must.NoError(t, err)
	_, err = putVariable(srv, mgmt, structs.VarOpSet, newVar("ops/db", map[string]string{"k": "v"}))
	must.NoError(t, err)

	reader := clientToken(t, srv, mgmt, "var-reader",
		varPolicy("default", "app/*", `"read"`)).SecretID
	writer := clientToken(t, srv, mgmt, "var-writer",
		varPolicy("default", "app/*", `"write", "destroy"`)).SecretID
	jobs := clientToken(t, srv, mgmt, "jobs-writer", `namespace "default" { policy = "write" }`).SecretID

	cases := []struct {
		name    string
		token   string
		op      structs.VarOp
		path    string
		wantErr string // "" = allowed
	}{
		{name: "reader cannot write", token: reader, op: structs.VarOpSet, path: "app/db", wantErr: "Permission denied: write capability required on variable path \"app/db\""},
		{name: "writer writes", token: writer, op: structs.VarOpSet, path: "app/db"},
		{name: "writer outside its paths", token: writer, op: structs.VarOpSet, path: "ops/db", wantErr: "Permission denied: write capability"},
		{name: "reader cannot destroy", token: reader, op: structs.VarOpDelete, path: "app/db", wantErr: "Permission denied: destroy capability"},
		{name: "job policy grants no variables", token: jobs, op: structs.VarOpSet, path: "app/db", wantErr: "Permission denied"},
		{name: "anonymous", token: "", op: structs.VarOpSet, path: "app/db", wantErr: "Permission denied"},
		{name: "bad path is checked after the ACL", token: writer, op: structs.VarOpSet, path: "ops/../x", wantErr: "Permission denied"},
		{name: "bad path under a granted glob", token: writer, op: structs.VarOpSet, path: "app/../x", wantErr: "invalid Path"},
		{name: "bad path allowed caller", token: mgmt, op: structs.VarOpSet, path: "app/../x", wantErr: "invalid Path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.State().LatestIndex()
			_, err := putVariable(srv, tc.token, tc.op, newVar(tc.path, map[string]string{"k": "new"}))
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, before, srv.State().LatestIndex(), must.Sprint("a refused write changed state"))
		})
	}

	t.Run("read and list follow the paths", func(t *testing.T) {
		var read structs.VariablesReadResponse
		err := srv.Endpoints.Variables.Read(&structs.VariablesReadRequest{Path: "ops/db",
			QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: reader}}, &read)
		must.ErrorContains(t, err, "Permission denied: read capability")
		must.NoError(t, srv.Endpoints.Variables.Read(&structs.VariablesReadRequest{Path: "app/db",
			QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: reader}}, &read))
		must.Eq(t, "new", read.Data.Items["k"])

		// read implies list, on its own paths only.
		var list structs.VariablesListResponse
		must.NoError(t, srv.Endpoints.Variables.List(&structs.VariablesListRequest{
			QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: reader}}, &list))
		must.SliceLen(t, 1, list.Data)
		must.Eq(t, "app/db", list.Data[0].Path)
		must.NoError(t, srv.Endpoints.Variables.List(&structs.VariablesListRequest{
			QueryOptions: structs.QueryOptions{Namespace: "*", AuthToken: mgmt}}, &list))
		must.SliceLen(t, 2, list.Data)
	})

	t.Run("a conflict shows items only to a reader", func(t *testing.T) {
		v := newVar("app/db", map[string]string{"k": "cas"})
		v.ModifyIndex = 1
		out, err := putVariable(srv, writer, structs.VarOpCAS, v)
		must.NoError(t, err)
		must.NotNil(t, out.Conflict)
		must.MapEmpty(t, out.Conflict.Items)
		out, err = putVariable(srv, mgmt, structs.VarOpCAS, v)
		must.NoError(t, err)
		must.Eq(t, "new", out.Conflict.Items["k"])
	})
}

func TestVariables_LockLifecycle(t *testing.T) {
	srv := testServer(t, nil)
	out, err := putVariable(srv, "", structs.VarOpLockAcquire, newVar("lock/a", map[string]string{"k": "v"}))
	must.NoError(t, err)
	must.NotNil(t, out.Output.Lock)
	lockID := out.Output.Lock.ID
	must.Eq(t, structs.VariableLockDefaultTTL, out.Output.Lock.TTL)

	// A second acquire conflicts and shows the holder's variable.
	again, err := putVariable(srv, "", structs.VarOpLockAcquire, newVar("lock/a", nil))
	must.NoError(t, err)
	must.NotNil(t, again.Conflict)
	must.Eq(t, lockID, again.Conflict.LockID())

	var renew structs.VariablesRenewLockResponse
	err = srv.Endpoints.Variables.RenewLock(&structs.VariablesRenewLockRequest{Path: "lock/a", LockID: "wrong",
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &renew)
	must.Eq(t, 409, structs.ErrorCode(err))
	must.NoError(t, srv.Endpoints.Variables.RenewLock(&structs.VariablesRenewLockRequest{Path: "lock/a", LockID: lockID,
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &renew))
	must.Eq(t, out.Output.ModifyIndex, renew.VarMeta.ModifyIndex)

	// Not renewed in time: the leader releases it through Raft. The deadline is moved into
	// the past instead of waiting out the TTL.
	must.NoError(t, srv.reapExpiredVariableLocks())
	row, err := srv.State().VariableByPath(nil, "default", "lock/a")
	must.NoError(t, err)
	must.Eq(t, lockID, row.LockID(), must.Sprint("a live lock was released"))
	srv.varLocks.arm("default", "lock/a", &structs.VariableLock{ID: lockID, TTL: -time.Second, LockDelay: time.Hour}, time.Now())
	must.NoError(t, srv.reapExpiredVariableLocks())
	row, err = srv.State().VariableByPath(nil, "default", "lock/a")
	must.NoError(t, err)
	must.Nil(t, row.Lock)
	must.MapEmpty(t, srv.varLocks.deadlines)

	// The lock expired: nobody may take it for its lock delay.
	before := srv.State().LatestIndex()
	_, err = putVariable(srv, "", structs.VarOpLockAcquire, newVar("lock/a", nil))
	must.ErrorContains(t, err, "lock delay")
	must.Eq(t, 409, structs.ErrorCode(err))
	must.Eq(t, before, srv.State().LatestIndex())
	srv.varLocks.startDelay("default", "lock/a", time.Now().Add(-time.Second))

	// A new leader re-arms the locks it finds.
	out, err = putVariable(srv, "", structs.VarOpLockAcquire, newVar("lock/a", nil))
	must.NoError(t, err)
	srv.varLocks.reset()
	must.NoError(t, srv.armVariableLocks())
	must.MapLen(t, 1, srv.varLocks.deadlines)
	must.Eq(t, out.Output.Lock.ID, srv.varLocks.deadlines[variableLockKey{"default", "lock/a"}].id)
}

// varPolicy is a policy granting caps (quoted, comma-separated) on one variables path; HCL
// wants each nested block on its own line.
func varPolicy(namespace, path, caps string) string {
	return "namespace \"" + namespace + "\" {\n  variables {\n    path \"" + path + "\" {\n      capabilities = [" + caps + "]\n    }\n  }\n}\n"
}
