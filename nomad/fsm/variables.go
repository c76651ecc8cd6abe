package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerVariableCommands() {
	// The answer is a *structs.VarApplyStateResponse: a failed check-and-set is an answer.
	handleAnswer(f, structs.VarApplyStateRequestType, (*state.StateStore).ApplyVariable)
}
