package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerAutopilotCommands() {
	// The answer is whether the configuration was stored; the caller reports Updated.
	handleAnswer(f, structs.AutopilotRequestType, (*state.StateStore).ApplyAutopilotSetConfig)
}
