package structs

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestJobValidate_Disconnect: bad durations and unknown reconcile strategies are refused at
// register time, naming the field.
func TestJobValidate_Disconnect(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(tg *api.TaskGroup)
		wantErr string // "" when valid
	}{
		{name: "full block", mutate: func(tg *api.TaskGroup) {
			tg.Disconnect = &api.DisconnectStrategy{LostAfter: new(time.Hour), Replace: new(false), Reconcile: new(api.ReconcileOptionKeepOriginal)}
		}},
		{name: "every strategy name", mutate: func(tg *api.TaskGroup) {
			tg.Disconnect = &api.DisconnectStrategy{Reconcile: new(api.ReconcileOptionLongestRunning)}
		}},
		{name: "older max_client_disconnect", mutate: func(tg *api.TaskGroup) { tg.MaxClientDisconnect = new(time.Minute) }},
		{name: "negative lost_after", mutate: func(tg *api.TaskGroup) {
			tg.Disconnect = &api.DisconnectStrategy{LostAfter: new(-time.Second)}
		}, wantErr: `group "g": disconnect: lost_after must not be negative, got -1s`},
		{name: "negative stop_on_client_after", mutate: func(tg *api.TaskGroup) {
			tg.Disconnect = &api.DisconnectStrategy{StopOnClientAfter: new(-time.Second)}
		}, wantErr: `disconnect: stop_on_client_after must not be negative`},
		{name: "negative max_client_disconnect", mutate: func(tg *api.TaskGroup) { tg.MaxClientDisconnect = new(-time.Minute) },
			wantErr: `group "g": max_client_disconnect must not be negative, got -1m0s`},
		{name: "unknown reconcile", mutate: func(tg *api.TaskGroup) {
			tg.Disconnect = &api.DisconnectStrategy{Reconcile: new(api.ReconcileOption("newest"))}
		}, wantErr: `group "g": disconnect: reconcile must be one of "best_score", "longest_running", "keep_original" or "keep_replacement", got "newest"`},
		{name: "both the block and the older field", mutate: func(tg *api.TaskGroup) {
			tg.MaxClientDisconnect = new(time.Minute)
			tg.Disconnect = &api.DisconnectStrategy{LostAfter: new(time.Minute)}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tc.mutate(j.TaskGroups[0])
			err := j.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// TestDisconnectFor: the block wins over the older fields; defaults are upstream's.
func TestDisconnectFor(t *testing.T) {
	cases := []struct {
		name string
		tg   *api.TaskGroup
		want Disconnect
	}{
		{"no group", nil, Disconnect{Replace: true, Reconcile: ReconcileBestScore}},
		{"no block", &api.TaskGroup{}, Disconnect{Replace: true, Reconcile: ReconcileBestScore}},
		{"older fields", &api.TaskGroup{MaxClientDisconnect: new(time.Minute), PreventRescheduleOnLost: new(true)},
			Disconnect{LostAfter: time.Minute, Replace: false, Reconcile: ReconcileBestScore}},
		{"block", &api.TaskGroup{Disconnect: &api.DisconnectStrategy{LostAfter: new(time.Hour), Replace: new(false), Reconcile: new(api.ReconcileOptionKeepReplacement)}},
			Disconnect{LostAfter: time.Hour, Replace: false, Reconcile: ReconcileKeepReplacement}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, DisconnectFor(tc.tg))
		})
	}
}
