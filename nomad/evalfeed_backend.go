package nomad

import (
	"time"

	"github.com/nomadfork/nomad/nomad/evalfeed"
)

// newEvalFeed is the feeder of this server's evaluation broker (the evalfeed package), which
// the leader runs each term.
func (s *Server) newEvalFeed() *evalfeed.Feeder {
	return evalfeed.New(evalfeed.Config{
		Broker:          s.evalBroker,
		State:           s.State,
		SchedulerConfig: s.schedulerConfigIn,
		Apply:           s.raftApply,
		Now:             now,
		FollowupDelay:   positive(s.config.EvalFailedFollowupDelay, time.Minute),
		DeliveryLimit:   s.evalDeliveryLimit(),
		Logger:          s.logger,
	})
}

func (s *Server) evalDeliveryLimit() int {
	if s.config.EvalBroker.DeliveryLimit > 0 {
		return s.config.EvalBroker.DeliveryLimit
	}
	return 3
}
