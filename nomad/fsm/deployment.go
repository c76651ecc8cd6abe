package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerDeploymentCommands() {
	handleApply(f, structs.DeploymentStatusUpdateRequestType, (*state.StateStore).ApplyDeploymentStatusUpdate)
	handleApply(f, structs.DeploymentPromoteRequestType, (*state.StateStore).ApplyDeploymentPromotion)
	handleApply(f, structs.DeploymentAllocHealthRequestType, (*state.StateStore).ApplyDeploymentAllocHealth)
}
