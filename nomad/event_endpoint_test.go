package nomad

import (
	"fmt"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestEventSubscribe_TopicKeyPairsAreBounded(t *testing.T) {
	srv := testServer(t, nil)
	keys := make([]string, structs.EventStreamMaxTopicKeys+1)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	_, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{Topics: map[structs.Topic][]string{structs.TopicJob: keys}})
	must.Eq(t, 400, structs.ErrorCode(err))
	must.ErrorContains(t, err, "1001 topic/key pairs, the limit is 1000")

	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{Topics: map[structs.Topic][]string{structs.TopicJob: keys[:structs.EventStreamMaxTopicKeys]}})
	must.NoError(t, err)
	sub.Unsubscribe()
}
