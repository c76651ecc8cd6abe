package structs

import (
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Reconcile strategies of a group's disconnect block: which of an allocation that comes back
// from a disconnected node and its replacement keeps running. The values are upstream's.
const (
	ReconcileBestScore       = string(api.ReconcileOptionBestScore)
	ReconcileLongestRunning  = string(api.ReconcileOptionLongestRunning)
	ReconcileKeepOriginal    = string(api.ReconcileOptionKeepOriginal)
	ReconcileKeepReplacement = string(api.ReconcileOptionKeepReplacement)
)

var reconcileStrategies = []string{ReconcileBestScore, ReconcileLongestRunning, ReconcileKeepOriginal, ReconcileKeepReplacement}

// Disconnect is what the servers do with a group's allocations when their node stops
// heartbeating, read from the group's disconnect block or its older max_client_disconnect.
type Disconnect struct {
	// LostAfter is how long an allocation stays unknown before it is lost; 0 makes it lost
	// at once, as without the block.
	LostAfter time.Duration
	// Replace places a replacement as soon as the allocation is unknown (upstream's default).
	Replace bool
	// Reconcile is the strategy applied when the original comes back.
	Reconcile string
}

// DisconnectFor reads a group's disconnect settings with upstream's defaults filled in: the
// disconnect block wins over max_client_disconnect, replace defaults to true and reconcile to
// best_score. A nil group reads as no block.
func DisconnectFor(tg *api.TaskGroup) Disconnect {
	d := Disconnect{Replace: true, Reconcile: ReconcileBestScore}
	if tg == nil {
		return d
	}
	if tg.MaxClientDisconnect != nil && *tg.MaxClientDisconnect > 0 {
		d.LostAfter = *tg.MaxClientDisconnect
	}
	if tg.PreventRescheduleOnLost != nil && *tg.PreventRescheduleOnLost {
		d.Replace = false
	}
	if b := tg.Disconnect; b != nil {
		if b.LostAfter != nil && *b.LostAfter > 0 {
			d.LostAfter = *b.LostAfter
		}
		if b.Replace != nil {
			d.Replace = *b.Replace
		}
		if b.Reconcile != nil && *b.Reconcile != "" {
			d.Reconcile = string(*b.Reconcile)
		}
	}
	return d
}

// checkDisconnect reports what is wrong with a group's disconnect block and the older fields
// it replaces, each message naming the field. Setting both the block and the older fields is
// accepted (jobs written for both versions do): the block wins (DisconnectFor).
func checkDisconnect(tg *api.TaskGroup) []string {
	var out []string
	negative := func(field string, d *time.Duration) {
		if d != nil && *d < 0 {
			out = append(out, fmt.Sprintf("%s must not be negative, got %s", field, *d))
		}
	}
	negative("max_client_disconnect", tg.MaxClientDisconnect)
	negative("stop_after_client_disconnect", tg.StopAfterClientDisconnect)
	b := tg.Disconnect
	if b == nil {
		return out
	}
	negative("disconnect: lost_after", b.LostAfter)
	negative("disconnect: stop_on_client_after", b.StopOnClientAfter)
	if b.Reconcile != nil && *b.Reconcile != "" {
		ok := false
		for _, r := range reconcileStrategies {
			ok = ok || string(*b.Reconcile) == r
		}
		if !ok {
			out = append(out, fmt.Sprintf("disconnect: reconcile must be one of %q, %q, %q or %q, got %s",
				ReconcileBestScore, ReconcileLongestRunning, ReconcileKeepOriginal, ReconcileKeepReplacement,
				quoteName(string(*b.Reconcile))))
		}
	}
	return out
}
