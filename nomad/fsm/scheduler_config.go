package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerSchedulerConfigCommands() {
	// The answer is whether the configuration was stored (false: the check-and-set failed).
	handleAnswer(f, structs.SchedulerConfigRequestType, (*state.StateStore).ApplySchedulerSetConfig)
}
