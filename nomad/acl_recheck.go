package nomad

import "context"

// aclSubscriptionRecheck re-checks the open event subscriptions after ACL writes, in one
// goroutine the server owns. An ACL write only marks a re-check as due (without waiting, on
// the FSM goroutine); the goroutine runs one check per mark it takes. Marks made while a
// check runs fold into one, so a burst of N writes costs at most two checks rather than N
// goroutines racing each other over the broker, and because a mark taken after the last
// write is always followed by a check, that write's effect is never missed.
type aclSubscriptionRecheck struct {
	due   chan struct{}
	check func()
}

func newACLSubscriptionRecheck(check func()) *aclSubscriptionRecheck {
	return &aclSubscriptionRecheck{due: make(chan struct{}, 1), check: check}
}

// request marks a re-check as due. It never blocks.
func (r *aclSubscriptionRecheck) request() {
	select {
	case r.due <- struct{}{}:
	default: // one is due already; it will read the state this write produced
	}
}

// run checks each time a re-check is due, until ctx ends.
func (r *aclSubscriptionRecheck) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.due:
			if ctx.Err() != nil {
				return // select picks at random when both are ready; shutdown wins
			}
			r.check()
		}
	}
}
