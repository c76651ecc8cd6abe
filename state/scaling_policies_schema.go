package state

import "github.com/nomadfork/nomad/structs"

const (
	tableScalingPolicies = "scaling_policy"
	indexTarget          = "target"
)

func init() {
	registerTable(tableScalingPolicies, &structs.ScalingPolicy{},
		idIndex(field("ID")), uniqueIndex(indexTarget, namespaced(field("JobID"), field("Group"))))
}
