package fsm

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// Every Raft message type gets its own apply timer: two types under one name would merge
// their figures, and a new type must not go unmeasured.
func TestFSMMetricNames_OnePerMessageType(t *testing.T) {
	owner := map[string]structs.MessageType{}
	for mt := range structs.MessageTypes {
		name := fsmMetricName(mt)
		must.StrNotContains(t, name, " ")
		must.NotEq(t, "", name)
		if other, dup := owner[name]; dup {
			t.Fatalf("message types %s and %s share the apply timer %q", mt, other, name)
		}
		owner[name] = mt
	}
	must.Eq(t, "purge_record_delete", snakeCase("PurgeRecordDelete"))
	must.Eq(t, "register_job", fsmMetricName(structs.JobRegisterRequestType))
}
