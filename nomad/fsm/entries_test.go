package fsm

import (
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// Finding 3: every entry the server writes carries a checksum the FSM verifies, so a flipped
// byte is caught as corruption at its index instead of applied as other data.
func TestSecurity_FSMRefusesEntryWithBadChecksum(t *testing.T) {
	f := testFSM(t)
	buf, err := structs.EncodeEntry(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.Job(), Actor: &structs.Actor{Name: "alice"}})
	must.NoError(t, err)
	i := strings.Index(string(buf), "alice")
	must.Positive(t, i)
	buf[i] = 'X'

	defer func() {
		r := recover()
		must.NotNil(t, r, must.Sprint("the FSM applied a damaged entry"))
		must.StrContains(t, r.(string), "corrupt log entry at index 42")
		must.StrContains(t, r.(string), "checksum mismatch")
	}()
	f.Apply(&raft.Log{Index: 42, Type: raft.LogCommand, Data: buf})
}

func TestFSM_AppliesChecksummedAndLegacyEntries(t *testing.T) {
	f := testFSM(t)
	checksummed, err := structs.EncodeEntry(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID("new")})
	must.NoError(t, err)
	must.Nil(t, f.Apply(&raft.Log{Index: 10, Type: raft.LogCommand, Data: checksummed}))
	// A data dir written before checksums holds type byte + msgpack entries.
	must.Nil(t, applyEntry(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID("old")}))
	for _, id := range []string{"new", "old"} {
		got, err := f.State().JobByID(nil, "default", id)
		must.NoError(t, err)
		must.NotNil(t, got, must.Sprintf("job %s not applied", id))
	}
}

// The leader checks entries against structs.MessageTypes[t].New; a handler decoding into any
// other type would make that check meaningless, so decode refuses it.
func TestFSM_EveryHandlerDecodesIntoTheTablesType(t *testing.T) {
	for mt, info := range structs.MessageTypes {
		t.Run(info.Name, func(t *testing.T) {
			f := testFSM(t)
			buf, err := structs.EncodeEntry(mt, info.New())
			must.NoError(t, err)
			func() {
				defer func() {
					// Handlers may fail on an empty request in other ways; only the table
					// check is under test.
					if r := recover(); r != nil {
						msg, _ := r.(string)
						must.False(t, strings.Contains(msg, "structs.MessageTypes says"), must.Sprint(msg))
					}
				}()
				f.Apply(&raft.Log{Index: 5, Type: raft.LogCommand, Data: buf})
			}()
		})
	}
	must.Panic(t, func() { decode(nil, new(structs.JobDeregisterRequest), structs.JobRegisterRequestType, 1) })
}
