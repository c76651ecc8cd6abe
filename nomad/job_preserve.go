package nomad

import (
	"slices"

	"github.com/nomadfork/nomad/structs"
)

// preserveResources gives each task of job that existing also has the resources existing
// gives it (register's PreserveResources, as upstream's `job run -preserve-resources`).
func preserveResources(job, existing *structs.Job) {
	job.CopyTaskGroups()
	for _, tg := range job.TaskGroups {
		prev := existing.LookupTaskGroup(*tg.Name)
		if prev == nil {
			continue
		}
		tg.Tasks = slices.Clone(tg.Tasks) // the groups are copies, their task lists are not
		for i, task := range tg.Tasks {
			for _, old := range prev.Tasks {
				if old != nil && task != nil && old.Name == task.Name && old.Resources != nil {
					t := *task
					r := *old.Resources
					t.Resources = &r
					tg.Tasks[i] = &t
				}
			}
		}
	}
}
