package state

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestSchedulerConfig_CheckAndSet(t *testing.T) {
	set := func(s *StateStore, index uint64, algorithm string, cas bool, check uint64) bool {
		ok, err := s.ApplySchedulerSetConfig(index, &structs.SchedulerSetConfigRequest{
			Config: structs.SchedulerConfiguration{SchedulerAlgorithm: algorithm, ModifyIndex: check}, CAS: cas})
		must.NoError(t, err)
		return ok
	}
	cases := []struct {
		name       string
		setup      func(s *StateStore)
		cas        bool
		check      uint64
		wantOK     bool
		wantAlgo   string // "" = nothing stored
		wantCreate uint64
	}{
		{name: "first set", wantOK: true, wantAlgo: "spread", wantCreate: 20},
		{name: "cas 0 when none is stored", cas: true, check: 0, wantOK: true, wantAlgo: "spread", wantCreate: 20},
		{name: "cas at another index when none is stored", cas: true, check: 5, wantOK: false},
		{name: "cas at the stored index", setup: func(s *StateStore) { set(s, 10, "binpack", false, 0) },
			cas: true, check: 10, wantOK: true, wantAlgo: "spread", wantCreate: 10},
		{name: "cas at a stale index", setup: func(s *StateStore) { set(s, 10, "binpack", false, 0) },
			cas: true, check: 9, wantOK: false, wantAlgo: "binpack", wantCreate: 10},
		{name: "set without cas overwrites", setup: func(s *StateStore) { set(s, 10, "binpack", false, 0) },
			wantOK: true, wantAlgo: "spread", wantCreate: 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			if tc.setup != nil {
				tc.setup(s)
			}
			must.Eq(t, tc.wantOK, set(s, 20, "spread", tc.cas, tc.check))
			got, err := s.SchedulerConfig(nil)
			must.NoError(t, err)
			if tc.wantAlgo == "" {
				must.Nil(t, got)
				return
			}
			must.Eq(t, tc.wantAlgo, got.SchedulerAlgorithm)
			must.Eq(t, tc.wantCreate, got.CreateIndex)
		})
	}
}
