package structs

import (
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"
)

// RescheduleMinDelay is the shortest reschedule delay a group may ask for, as upstream: a
// failing task replaced faster than this would only churn the cluster.
const RescheduleMinDelay = 5 * time.Second

// checkReschedule reports what is wrong with each group's reschedule block, naming the field.
func checkReschedule(j *Job) []string {
	var msgs []string
	for _, tg := range j.TaskGroups {
		if tg == nil || tg.ReschedulePolicy == nil {
			continue
		}
		p := tg.ReschedulePolicy
		where := fmt.Sprintf("group %s: reschedule", quoteName(stringValue(tg.Name)))
		if (j.Type == JobTypeSystem || j.Type == JobTypeSysBatch) && !emptyReschedule(p) {
			msgs = append(msgs, fmt.Sprintf("%s: job type %q does not allow a reschedule block", where, j.Type))
			continue
		}
		attempts, interval, delay, maxDelay := intValue(p.Attempts), durValue(p.Interval), durValue(p.Delay), durValue(p.MaxDelay)
		unlimited := p.Unlimited != nil && *p.Unlimited
		fn := stringValue(p.DelayFunction)
		if attempts == 0 && !unlimited {
			continue // rescheduling is off: the other fields do not matter
		}
		switch fn {
		case "constant", "exponential", "fibonacci":
		default:
			msgs = append(msgs, fmt.Sprintf("%s: delay_function %q must be one of constant, exponential, fibonacci", where, fn))
		}
		if attempts < 0 {
			msgs = append(msgs, fmt.Sprintf("%s: attempts (%d) must not be negative", where, attempts))
		}
		if unlimited && attempts > 0 {
			msgs = append(msgs, fmt.Sprintf("%s: attempts (%d) must be 0 with unlimited", where, attempts))
		}
		if delay < RescheduleMinDelay {
			msgs = append(msgs, fmt.Sprintf("%s: delay (%s) must be at least %s", where, delay, RescheduleMinDelay))
		}
		if fn != "constant" && maxDelay < delay {
			msgs = append(msgs, fmt.Sprintf("%s: max_delay (%s) must not be less than delay (%s)", where, maxDelay, delay))
		}
		if !unlimited && interval <= 0 {
			msgs = append(msgs, fmt.Sprintf("%s: interval (%s) must be positive with a limited number of attempts", where, interval))
		}
		if !unlimited && interval > 0 && fn == "constant" && time.Duration(attempts)*delay > interval {
			msgs = append(msgs, fmt.Sprintf("%s: interval (%s) is too short for %d attempts %s apart", where, interval, attempts, delay))
		}
	}
	return msgs
}

func emptyReschedule(p *api.ReschedulePolicy) bool {
	return intValue(p.Attempts) == 0 && (p.Unlimited == nil || !*p.Unlimited)
}

func durValue(p *time.Duration) time.Duration {
	if p == nil {
		return 0
	}
	return *p
}
