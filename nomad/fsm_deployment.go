package nomad

import (
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerDeploymentCommands() {
	f.registerCommand(structs.DeploymentStatusUpdateRequestType, f.applyDeploymentStatusUpdate)
	f.registerCommand(structs.DeploymentPromoteRequestType, f.applyDeploymentPromotion)
	f.registerCommand(structs.DeploymentAllocHealthRequestType, f.applyDeploymentAllocHealth)
}

func (f *FSM) applyDeploymentStatusUpdate(buf []byte, index uint64) any {
	var req structs.DeploymentStatusUpdateRequest
	decode(buf, &req, structs.DeploymentStatusUpdateRequestType, index)
	if err := f.State().ApplyDeploymentStatusUpdate(index, &req); err != nil {
		return err
	}
	return nil
}

func (f *FSM) applyDeploymentPromotion(buf []byte, index uint64) any {
	var req structs.DeploymentPromoteRequest
	decode(buf, &req, structs.DeploymentPromoteRequestType, index)
	if err := f.State().ApplyDeploymentPromotion(index, &req); err != nil {
		return err
	}
	return nil
}

func (f *FSM) applyDeploymentAllocHealth(buf []byte, index uint64) any {
	var req structs.DeploymentAllocHealthRequest
	decode(buf, &req, structs.DeploymentAllocHealthRequestType, index)
	if err := f.State().ApplyDeploymentAllocHealth(index, &req); err != nil {
		return err
	}
	return nil
}
