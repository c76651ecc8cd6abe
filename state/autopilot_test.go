package state

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestAutopilotConfig_SetAndCAS(t *testing.T) {
	cases := []struct {
		name        string
		stored      bool   // a configuration is stored at index 10 first
		cas         bool   // the write at index 11 is a CAS
		casIndex    uint64 // the ModifyIndex it expects
		wantUpdated bool
	}{
		{name: "first write", wantUpdated: true},
		{name: "overwrite", stored: true, wantUpdated: true},
		{name: "cas on nothing stored expects 0", cas: true, casIndex: 0, wantUpdated: true},
		{name: "cas on nothing stored with an index loses", cas: true, casIndex: 3},
		{name: "cas with the stored index wins", stored: true, cas: true, casIndex: 10, wantUpdated: true},
		{name: "cas with a stale index loses", stored: true, cas: true, casIndex: 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			idx, conf, err := s.AutopilotConfig(nil)
			must.NoError(t, err)
			must.Nil(t, conf)
			must.Zero(t, idx)
			if tc.stored {
				_, err := s.ApplyAutopilotSetConfig(10, &structs.AutopilotSetConfigRequest{Config: structs.AutopilotConfig{MaxTrailingLogs: 1}})
				must.NoError(t, err)
			}
			updated, err := s.ApplyAutopilotSetConfig(11, &structs.AutopilotSetConfigRequest{Config: structs.AutopilotConfig{
				MaxTrailingLogs: 2, LastContactThreshold: time.Second, ModifyIndex: tc.casIndex,
			}, CAS: tc.cas})
			must.NoError(t, err)
			must.Eq(t, tc.wantUpdated, updated)
			idx, conf, err = s.AutopilotConfig(nil)
			must.NoError(t, err)
			switch {
			case tc.wantUpdated:
				must.Eq(t, uint64(2), conf.MaxTrailingLogs)
				must.Eq(t, time.Second, conf.LastContactThreshold)
				must.Eq(t, uint64(11), conf.ModifyIndex)
				must.Eq(t, uint64(11), idx)
				if tc.stored {
					must.Eq(t, uint64(10), conf.CreateIndex)
				}
			case tc.stored:
				must.Eq(t, uint64(1), conf.MaxTrailingLogs)
				must.Eq(t, uint64(10), idx)
			default:
				must.Nil(t, conf)
				must.Zero(t, idx)
			}
		})
	}
}
