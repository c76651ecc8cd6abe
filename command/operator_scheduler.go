package command

import (
	"fmt"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const operatorSchedulerHelp = `
Usage: nomad operator scheduler <subcommand> [options]

  Read and change the cluster's scheduler configuration.
`

func newOperatorSchedulerGetConfig(m Meta) cli.Command {
	return &readCommand[*api.SchedulerConfiguration]{Meta: m, name: "operator scheduler get-config",
		synopsis: "Show the scheduler configuration", jsonWhat: "the configuration",
		usage: `
Usage: nomad operator scheduler get-config [options]

  Show the scheduler configuration. Needs operator read.
`,
		fetch: func(client *api.Client, _ []string) (*api.SchedulerConfiguration, error) {
			resp, _, err := client.Operator().SchedulerGetConfiguration(nil)
			if err != nil {
				return nil, err
			}
			return resp.SchedulerConfig, nil
		},
		failure: "Error reading scheduler configuration: %v", format: formatSchedulerConfig}
}

func formatSchedulerConfig(sc *api.SchedulerConfiguration) string {
	return formatKV([]string{
		"Scheduler Algorithm|" + string(sc.SchedulerAlgorithm),
		fmt.Sprintf("Memory Oversubscription|%t", sc.MemoryOversubscriptionEnabled),
		fmt.Sprintf("Reject Job Registration|%t", sc.RejectJobRegistration),
		fmt.Sprintf("Pause Eval Broker|%t", sc.PauseEvalBroker),
		fmt.Sprintf("Preemption System Scheduler|%t", sc.PreemptionConfig.SystemSchedulerEnabled),
		fmt.Sprintf("Preemption Service Scheduler|%t", sc.PreemptionConfig.ServiceSchedulerEnabled),
		fmt.Sprintf("Preemption Batch Scheduler|%t", sc.PreemptionConfig.BatchSchedulerEnabled),
		fmt.Sprintf("Preemption SysBatch Scheduler|%t", sc.PreemptionConfig.SysBatchSchedulerEnabled),
		fmt.Sprintf("Modify Index|%d", sc.ModifyIndex),
	})
}

// OperatorSchedulerSetConfigCommand changes the scheduler configuration.
type OperatorSchedulerSetConfigCommand struct {
	Meta
}

func (c *OperatorSchedulerSetConfigCommand) Help() string {
	return helpText(`
Usage: nomad operator scheduler set-config [options]

  Change the scheduler configuration. Settings not given keep their current
  values. Needs operator write.
`, `
Set Config Options:

  -scheduler-algorithm=<binpack|spread>
    How the scheduler ranks nodes that fit.

  -reject-job-registration=<bool>
    Refuse job registration and scaling to every token but management ones.

  -pause-eval-broker=<bool>, -memory-oversubscription=<bool>,
  -preempt-system-scheduler=<bool>, -preempt-service-scheduler=<bool>,
  -preempt-batch-scheduler=<bool>, -preempt-sysbatch-scheduler=<bool>
    Stored and shown; this version does not act on them yet.

  -check-index=<index>
    Change the configuration only if its modify index is still <index>.
`)
}

func (c *OperatorSchedulerSetConfigCommand) Synopsis() string {
	return "Change the scheduler configuration"
}

func (c *OperatorSchedulerSetConfigCommand) Run(args []string) int {
	algorithm := optString{}
	checkIndex := optUint{}
	var reject, pause, memOversub, preSystem, preService, preBatch, preSysBatch optBool
	fs := c.FlagSet("operator scheduler set-config")
	fs.Var(&algorithm, "scheduler-algorithm", "")
	fs.Var(&checkIndex, "check-index", "")
	fs.Var(&reject, "reject-job-registration", "")
	fs.Var(&pause, "pause-eval-broker", "")
	fs.Var(&memOversub, "memory-oversubscription", "")
	fs.Var(&preSystem, "preempt-system-scheduler", "")
	fs.Var(&preService, "preempt-service-scheduler", "")
	fs.Var(&preBatch, "preempt-batch-scheduler", "")
	fs.Var(&preSysBatch, "preempt-sysbatch-scheduler", "")
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	resp, _, err := client.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return c.fail("Error reading scheduler configuration: %v", err)
	}
	sc := resp.SchedulerConfig
	if algorithm.set {
		sc.SchedulerAlgorithm = api.SchedulerAlgorithm(algorithm.v)
	}
	for _, f := range []struct {
		flag *optBool
		dst  *bool
	}{
		{&reject, &sc.RejectJobRegistration}, {&pause, &sc.PauseEvalBroker},
		{&memOversub, &sc.MemoryOversubscriptionEnabled},
		{&preSystem, &sc.PreemptionConfig.SystemSchedulerEnabled},
		{&preService, &sc.PreemptionConfig.ServiceSchedulerEnabled},
		{&preBatch, &sc.PreemptionConfig.BatchSchedulerEnabled},
		{&preSysBatch, &sc.PreemptionConfig.SysBatchSchedulerEnabled},
	} {
		if f.flag.set {
			*f.dst = f.flag.v
		}
	}
	var out *api.SchedulerSetConfigurationResponse
	if checkIndex.set {
		sc.ModifyIndex = checkIndex.v
		out, _, err = client.Operator().SchedulerCASConfiguration(sc, nil)
	} else {
		out, _, err = client.Operator().SchedulerSetConfiguration(sc, nil)
	}
	if err != nil {
		return c.fail("Error setting scheduler configuration: %v", err)
	}
	if !out.Updated {
		return c.fail("Scheduler configuration not updated: its modify index is no longer %d", checkIndex.v)
	}
	c.Ui.Output("Scheduler configuration updated!")
	return 0
}
