package nomad

import (
	"time"

	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/structs"
)

// Event is the event stream endpoint.
type Event struct {
	srv *Server
}

// EventStreamRequest asks for a subscription (structs.EventStreamRequest, which a client
// agent sends over its connection).
type EventStreamRequest = structs.EventStreamRequest

// Subscribe authorizes and opens a subscription. A denial is a 403 before any streaming.
func (e *Event) Subscribe(args *EventStreamRequest) (*stream.Subscription, error) {
	sub, _, err := e.SubscribeUntil(args)
	return sub, err
}

// SubscribeUntil is Subscribe that also returns when the caller's token expires (nil: never),
// so the stream can end at that moment rather than when the leader reaps the token.
func (e *Event) SubscribeUntil(args *EventStreamRequest) (*stream.Subscription, *time.Time, error) {
	if e.srv.broker == nil {
		return nil, nil, structs.BadRequest("event broker is disabled on this server (enable_event_broker = false)")
	}
	if args.Namespace == "" {
		args.Namespace = structs.DefaultNamespace
	}
	if len(args.Topics) == 0 {
		args.Topics = map[structs.Topic][]string{structs.TopicAll: {"*"}}
	}
	pairs := 0
	for _, keys := range args.Topics {
		pairs += len(keys)
	}
	if pairs > structs.EventStreamMaxTopicKeys {
		return nil, nil, structs.BadRequest("subscription names %d topic/key pairs, the limit is %d", pairs, structs.EventStreamMaxTopicKeys)
	}
	_, actor, err := e.srv.resolveACL(args.AuthToken)
	if err != nil {
		return nil, nil, err
	}
	req := &stream.SubscribeRequest{
		Topics:    args.Topics,
		Namespace: args.Namespace,
		Token:     args.AuthToken,
	}
	if args.Index > 0 {
		req.Index = args.Index - 1
	}
	if actor != nil {
		req.TokenAccessorID = actor.AccessorID
	}
	if missing := e.srv.subscriptionDenied(req); missing != "" {
		return nil, nil, structs.PermissionDenied("%s", missing)
	}
	var expires *time.Time
	if e.srv.config.ACLEnabled && args.AuthToken != "" {
		if tok, err := e.srv.State().ACLTokenBySecretID(nil, args.AuthToken); err == nil && tok != nil {
			expires = tok.ExpirationTime
		}
	}
	sub, err := e.srv.broker.Subscribe(req)
	return sub, expires, err
}

// subscriptionAllowed re-checks an open subscription after an ACL change.
func (s *Server) subscriptionAllowed(req *stream.SubscribeRequest) bool {
	return s.subscriptionDenied(req) == ""
}

// subscriptionDenied returns what the subscriber lacks, or "" when every topic is allowed.
// Job-like topics need read-job in the namespace (with "*", in every namespace, which only a
// policy covering "*" or management gives); Node needs node read; the rest need management.
func (s *Server) subscriptionDenied(req *stream.SubscribeRequest) string {
	aclObj, _, err := s.resolveACL(req.Token)
	if err != nil {
		return "the subscription's token is no longer valid"
	}
	if aclObj.IsManagement() || aclObj.IsDisabled() {
		return ""
	}
	for topic := range req.Topics {
		switch topic {
		case structs.TopicJob, structs.TopicEvaluation, structs.TopicAllocation, structs.TopicDeployment, structs.TopicService, structs.TopicPurgeRecord:
			if !aclObj.AllowNamespaceOperation(req.Namespace, acl.NamespaceCapabilityReadJob) {
				return "read-job capability required in namespace \"" + req.Namespace + "\" for topic " + string(topic)
			}
		case structs.TopicNode:
			if !aclObj.AllowNodeRead() {
				return "node read required for topic Node"
			}
		default:
			return "management token required for topic " + string(topic)
		}
	}
	return ""
}
