package structs

import (
	"testing"

	"github.com/shoenig/test/must"
)

func validSink() *EventSink {
	return &EventSink{ID: "alerts", Type: EventSinkTypeWebhook, Address: "https://h.example/x",
		Topics: map[Topic][]string{TopicJob: {"*"}}, Secret: "0123456789abcdef"}
}

func TestEventSink_ValidateNamesTheField(t *testing.T) {
	must.NoError(t, validSink().Validate())
	cases := map[string]func(s *EventSink){
		"ID":      func(s *EventSink) { s.ID = "a/b" },
		"Type":    func(s *EventSink) { s.Type = "" },
		"Address": func(s *EventSink) { s.Address = "https://user:pw@h.example/" },
		"Topics":  func(s *EventSink) { s.Topics = nil },
		"Secret":  func(s *EventSink) { s.Secret = "short" },
	}
	for field, edit := range cases {
		s := validSink()
		edit(s)
		err := s.Validate()
		must.Eq(t, 400, ErrorCode(err), must.Sprint(field))
		must.StrContains(t, err.Error(), field)
		must.StrNotContains(t, err.Error(), "0123456789abcdef")
	}
}

// Only a change of how a sink delivers restarts its worker; progress does not, and the
// redacted copy drops the secret without touching the original.
func TestEventSink_SameDeliveryAndRedacted(t *testing.T) {
	a, b := validSink(), validSink()
	b.LatestIndex, b.LastError = 99, "boom"
	must.True(t, a.SameDelivery(b))
	b.Topics = map[Topic][]string{TopicJob: {"web"}}
	must.False(t, a.SameDelivery(b))
	b = validSink()
	b.Secret = "another-secret-000"
	must.False(t, a.SameDelivery(b))
	r := a.Redacted()
	must.Eq(t, "", r.Secret)
	must.Eq(t, "0123456789abcdef", a.Secret)
}
