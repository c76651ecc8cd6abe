package command

import (
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// What the alloc commands share: finding the allocation a command is about and its task.

// lookupAlloc resolves an allocation ID or unique prefix and reads the allocation.
func (m *Meta) lookupAlloc(client *api.Client, prefix string) (*api.Allocation, bool) {
	if len(prefix) < 2 {
		m.fail("Allocation ID must have at least two characters")
		return nil, false
	}
	stubs, _, err := client.Allocations().PrefixList(prefix)
	if err != nil {
		m.fail("Error querying allocation prefix %q: %v", prefix, err)
		return nil, false
	}
	var id string
	for _, s := range stubs {
		if s.ID == prefix {
			id = s.ID
		}
	}
	switch {
	case id != "":
	case len(stubs) == 0:
		m.fail("No allocation(s) with prefix or ID %q found", prefix)
		return nil, false
	case len(stubs) == 1:
		id = stubs[0].ID
	default:
		ids := make([]string, len(stubs))
		for i, s := range stubs {
			ids[i] = s.ID
		}
		sort.Strings(ids)
		m.fail("Prefix %q matched multiple allocations: %v", prefix, ids)
		return nil, false
	}
	alloc, _, err := client.Allocations().Info(id, nil)
	if err != nil {
		m.fail("Error querying allocation %s: %v", id, err)
		return nil, false
	}
	return alloc, true
}

// jobAlloc picks a running allocation of the job at random, as upstream does.
func (m *Meta) jobAlloc(client *api.Client, jobID string) (*api.Allocation, bool) {
	stubs, _, err := client.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		m.fail("Error querying allocations of job %q: %v", jobID, err)
		return nil, false
	}
	var live []*api.AllocationListStub
	for _, s := range stubs {
		if s.ClientStatus == "running" && s.DesiredStatus == "run" {
			live = append(live, s)
		}
	}
	if len(live) == 0 {
		m.fail("Job %q has no running allocations", jobID)
		return nil, false
	}
	pick := live[rand.IntN(len(live))]
	alloc, _, err := client.Allocations().Info(pick.ID, nil)
	if err != nil {
		m.fail("Error querying allocation %s: %v", pick.ID, err)
		return nil, false
	}
	return alloc, true
}

// pickTask checks the named task is one of the allocation's, or, when none is named, takes
// the group's only task.
func (m *Meta) pickTask(alloc *api.Allocation, task string) (string, bool) {
	var names []string
	if alloc.Job != nil {
		for _, tg := range alloc.Job.TaskGroups {
			if tg.Name == nil || *tg.Name != alloc.TaskGroup {
				continue
			}
			for _, t := range tg.Tasks {
				names = append(names, t.Name)
			}
		}
	}
	sort.Strings(names)
	switch {
	case task != "":
		for _, n := range names {
			if n == task {
				return task, true
			}
		}
		m.fail("Task %q is not in allocation %s; its tasks: %s", task, shortID(alloc.ID), strings.Join(names, ", "))
		return "", false
	case len(names) == 1:
		return names[0], true
	default:
		m.fail("Allocation %s has several tasks, pick one with -task: %s", shortID(alloc.ID), strings.Join(names, ", "))
		return "", false
	}
}

// clientAlloc connects to the agent and finds the allocation target names: an allocation ID
// or unique prefix, or with byJob a job whose allocation to pick.
func (m *Meta) clientAlloc(target string, byJob bool) (*api.Client, *api.Allocation, bool) {
	client, ok := m.client()
	if !ok {
		return nil, nil, false
	}
	var alloc *api.Allocation
	if byJob {
		alloc, ok = m.jobAlloc(client, target)
	} else {
		alloc, ok = m.lookupAlloc(client, target)
	}
	return client, alloc, ok
}
