package command

import (
	"strings"

	"github.com/hashicorp/cli"
)

// Commands returns every CLI command except "agent", which main.go adds so
// that this package never depends on the server.
func Commands(ui cli.Ui) map[string]cli.CommandFactory {
	meta := func() Meta { return Meta{Ui: ui} }
	group := func(synopsis, help string) cli.CommandFactory {
		return func() (cli.Command, error) { return &groupCommand{synopsis: synopsis, help: help}, nil }
	}
	all := map[string]cli.CommandFactory{
		"version": func() (cli.Command, error) { return &VersionCommand{Ui: ui}, nil },
		"status":  declared(meta, newStatus),

		"job":                group("Interact with jobs", jobHelp),
		"job run":            func() (cli.Command, error) { return &JobRunCommand{Meta: meta()}, nil },
		"job stop":           declared(meta, newJobStop),
		"job status":         func() (cli.Command, error) { return &JobStatusCommand{Meta: meta()}, nil },
		"job inspect":        declared(meta, newJobInspect),
		"job history":        declared(meta, newJobHistory),
		"job revert":         declared(meta, newJobRevert),
		"job scale":          declared(meta, newJobScale),
		"job tag":            group("Manage job version tags", jobTagHelp),
		"job tag apply":      declared(meta, newJobTagApply),
		"job tag unset":      declared(meta, newJobTagUnset),
		"job validate":       func() (cli.Command, error) { return &JobValidateCommand{Meta: meta()}, nil },
		"job plan":           func() (cli.Command, error) { return &JobPlanCommand{Meta: meta()}, nil },
		"job eval":           declared(meta, newJobEval),
		"job purged":         func() (cli.Command, error) { return &JobPurgedCommand{Meta: meta()}, nil },
		"job restore":        declared(meta, newJobRestore),
		"job protect":        declared(meta, newJobProtect),
		"job unprotect":      declared(meta, newJobUnprotect),
		"job promote":        declared(meta, newJobPromote),
		"job dispatch":       func() (cli.Command, error) { return &JobDispatchCommand{Meta: meta()}, nil },
		"job periodic":       group("Interact with periodic jobs", jobPeriodicHelp),
		"job periodic force": declared(meta, newJobPeriodicForce),

		"deployment":         group("Interact with deployments", deploymentHelp),
		"deployment list":    declared(meta, newDeploymentList),
		"deployment status":  declared(meta, newDeploymentStatus),
		"deployment promote": func() (cli.Command, error) { return newDeploymentPromote(meta()), nil },
		"deployment fail":    func() (cli.Command, error) { return newDeploymentFail(meta()), nil },
		"deployment pause":   func() (cli.Command, error) { return newDeploymentPause(meta(), true), nil },
		"deployment resume":  func() (cli.Command, error) { return newDeploymentPause(meta(), false), nil },

		"node":             group("Interact with nodes", nodeHelp),
		"node status":      declared(meta, newNodeStatus),
		"node drain":       declared(meta, newNodeDrain),
		"node eligibility": declared(meta, newNodeEligibility),
		"node intro":       group("Manage client introduction tokens", nodeIntroHelp),
		"node intro create": func() (cli.Command, error) {
			return &NodeIntroCreateCommand{Meta: meta()}, nil
		},

		"namespace":        group("Interact with namespaces", namespaceHelp),
		"namespace apply":  declared(meta, newNamespaceApply),
		"namespace list":   declared(meta, newNamespaceList),
		"namespace status": declared(meta, newNamespaceStatus),
		"namespace delete": declared(meta, newNamespaceDelete),

		"acl":               group("Interact with ACL policies, tokens and roles", aclHelp),
		"acl bootstrap":     declared(meta, newACLBootstrap),
		"acl policy":        group("Interact with ACL policies", aclPolicyHelp),
		"acl policy apply":  func() (cli.Command, error) { return &ACLPolicyApplyCommand{Meta: meta()}, nil },
		"acl policy info":   declared(meta, newACLPolicyInfo),
		"acl policy list":   declared(meta, newACLPolicyList),
		"acl policy delete": declared(meta, newACLPolicyDelete),
		"acl token":         group("Interact with ACL tokens", aclTokenHelp),
		"acl token create":  func() (cli.Command, error) { return &ACLTokenCreateCommand{Meta: meta()}, nil },
		"acl token list":    declared(meta, newACLTokenList),
		"acl token info":    declared(meta, newACLTokenInfo),
		"acl token self":    declared(meta, newACLTokenSelf),
		"acl token update":  func() (cli.Command, error) { return &ACLTokenUpdateCommand{Meta: meta()}, nil },
		"acl token delete":  declared(meta, newACLTokenDelete),
		"acl role":          group("Interact with ACL roles", aclRoleHelp),
		"acl role create":   declared(meta, newACLRoleCreate),
		"acl role list":     declared(meta, newACLRoleList),
		"acl role info":     declared(meta, newACLRoleInfo),
		"acl role update":   func() (cli.Command, error) { return &ACLRoleUpdateCommand{Meta: meta()}, nil },
		"acl role delete":   declared(meta, newACLRoleDelete),
		"alloc":             group("Interact with allocations", allocHelp),
		"alloc checks":      declared(meta, newAllocChecks),
		"alloc exec":        func() (cli.Command, error) { return &AllocExecCommand{Meta: meta()}, nil },
		"alloc fs":          func() (cli.Command, error) { return &AllocFSCommand{Meta: meta()}, nil },
		"alloc logs":        func() (cli.Command, error) { return &AllocLogsCommand{Meta: meta()}, nil },
		"alloc restart":     declared(meta, newAllocRestart),
		"alloc signal":      declared(meta, newAllocSignal),
		"alloc stop":        declared(meta, newAllocStop),
		"alloc status":      func() (cli.Command, error) { return &AllocStatusCommand{Meta: meta()}, nil },
		"eval":              group("Inspect evaluations", evalHelp),
		"eval list":         declared(meta, newEvalList),
		"eval status":       declared(meta, newEvalStatus),
		"event":             group("Interact with the event stream", eventHelp),
		"event stream":      func() (cli.Command, error) { return &EventStreamCommand{Meta: meta()}, nil },
		"event sink":        group("Deliver selected events to webhooks", eventSinkHelp),
		"event sink register": func() (cli.Command, error) {
			return &EventSinkRegisterCommand{Meta: meta()}, nil
		},
		"event sink list":   func() (cli.Command, error) { return &EventSinkListCommand{Meta: meta()}, nil },
		"event sink status": func() (cli.Command, error) { return &EventSinkStatusCommand{Meta: meta()}, nil },
		"event sink deregister": func() (cli.Command, error) {
			return &EventSinkDeregisterCommand{Meta: meta()}, nil
		},
		"tls":                           group("Create a CA and certificates for mutual TLS", tlsHelp),
		"tls ca":                        group("Create a certificate authority", tlsCAHelp),
		"tls ca create":                 func() (cli.Command, error) { return &TLSCACreateCommand{Meta: meta()}, nil },
		"tls cert":                      group("Create certificates", tlsCertHelp),
		"tls cert create":               func() (cli.Command, error) { return &TLSCertCreateCommand{Meta: meta()}, nil },
		"operator":                      group("Cluster operator tools", operatorHelp),
		"operator raft":                 group("Inspect a running cluster's Raft peers, or repair a stopped server's log", operatorRaftHelp),
		"node pool":                     group("Interact with node pools", nodePoolHelp),
		"node pool apply":               func() (cli.Command, error) { return &NodePoolApplyCommand{Meta: meta()}, nil },
		"node pool list":                declared(meta, newNodePoolList),
		"node pool info":                declared(meta, newNodePoolInfo),
		"node pool delete":              declared(meta, newNodePoolDelete),
		"service":                       group("Interact with registered services", serviceHelp),
		"service list":                  declared(meta, newServiceList),
		"service info":                  declared(meta, newServiceInfo),
		"service delete":                func() (cli.Command, error) { return &ServiceDeleteCommand{Meta: meta()}, nil },
		"var":                           group("Interact with variables", varHelp),
		"var put":                       declared(meta, newVarPut),
		"var get":                       declared(meta, newVarGet),
		"var list":                      declared(meta, newVarList),
		"var purge":                     declared(meta, newVarPurge),
		"operator scheduler":            group("Read and change the scheduler configuration", operatorSchedulerHelp),
		"operator scheduler get-config": declared(meta, newOperatorSchedulerGetConfig),
		"operator scheduler set-config": func() (cli.Command, error) {
			return &OperatorSchedulerSetConfigCommand{Meta: meta()}, nil
		},
		"acl auth-method":         group("Interact with ACL auth methods", aclAuthMethodHelp),
		"acl auth-method create":  func() (cli.Command, error) { return &ACLAuthMethodCreateCommand{Meta: meta()}, nil },
		"acl auth-method list":    declared(meta, newACLAuthMethodList),
		"acl auth-method info":    declared(meta, newACLAuthMethodInfo),
		"acl auth-method update":  func() (cli.Command, error) { return &ACLAuthMethodUpdateCommand{Meta: meta()}, nil },
		"acl auth-method delete":  declared(meta, newACLAuthMethodDelete),
		"acl binding-rule":        group("Interact with ACL binding rules", aclBindingRuleHelp),
		"acl binding-rule create": func() (cli.Command, error) { return &ACLBindingRuleCreateCommand{Meta: meta()}, nil },
		"acl binding-rule list":   declared(meta, newACLBindingRuleList),
		"acl binding-rule info":   declared(meta, newACLBindingRuleInfo),
		"acl binding-rule update": func() (cli.Command, error) { return &ACLBindingRuleUpdateCommand{Meta: meta()}, nil },
		"acl binding-rule delete": declared(meta, newACLBindingRuleDelete),
		"login":                   declared(meta, newLogin),
		"operator raft logs": func() (cli.Command, error) {
			return &OperatorRaftLogsCommand{Meta: meta()}, nil
		},
		"operator raft skip": func() (cli.Command, error) {
			return &OperatorRaftSkipCommand{Meta: meta()}, nil
		},
		"operator raft truncate": func() (cli.Command, error) {
			return &OperatorRaftTruncateCommand{Meta: meta()}, nil
		},
		"operator raft list-peers": declared(meta, newOperatorRaftListPeers),
		"operator raft remove-peer": func() (cli.Command, error) {
			return &OperatorRaftRemovePeerCommand{Meta: meta()}, nil
		},
		"operator raft transfer-leadership": func() (cli.Command, error) {
			return &OperatorRaftTransferLeadershipCommand{Meta: meta()}, nil
		},
		"operator autopilot":            group("Inspect and change autopilot", operatorAutopilotHelp),
		"operator autopilot get-config": declared(meta, newOperatorAutopilotGet),
		"operator autopilot set-config": func() (cli.Command, error) {
			return &OperatorAutopilotSetCommand{Meta: meta()}, nil
		},
		"operator autopilot health": declared(meta, newOperatorAutopilotHealth),
		"server":                    group("Inspect and manage the servers' gossip pool", serverHelp),
		"server members":            declared(meta, newServerMembers),
		"server join":               declared(meta, newServerJoin),
		"server force-leave":        func() (cli.Command, error) { return &ServerForceLeaveCommand{Meta: meta()}, nil },

		// Operations and everyday shortcuts (snapshots, system, agent, top-level aliases).
		"run":                        alias("run", "job run", func() (cli.Command, error) { return &JobRunCommand{Meta: meta()}, nil }),
		"plan":                       alias("plan", "job plan", func() (cli.Command, error) { return &JobPlanCommand{Meta: meta()}, nil }),
		"stop":                       alias("stop", "job stop", declared(meta, newJobStop)),
		"job allocs":                 declared(meta, newJobAllocs),
		"job deployments":            declared(meta, newJobDeployments),
		"job init":                   declared(meta, newJobInit),
		"job restart":                func() (cli.Command, error) { return &JobRestartCommand{Meta: meta()}, nil },
		"job start":                  declared(meta, newJobStart),
		"var lock":                   func() (cli.Command, error) { return &VarLockCommand{Meta: meta()}, nil },
		"acl policy self":            declared(meta, newACLPolicySelf),
		"operator snapshot":          group("Save, restore and inspect snapshots of the servers' state", operatorSnapshotHelp),
		"operator snapshot save":     declared(meta, newOperatorSnapshotSave),
		"operator snapshot restore":  declared(meta, newOperatorSnapshotRestore),
		"operator snapshot inspect":  func() (cli.Command, error) { return &OperatorSnapshotInspectCommand{Meta: meta()}, nil },
		"system":                     group("Cluster-wide maintenance", systemHelp),
		"system gc":                  declared(meta, newSystemGC),
		"system reconcile":           group("Rebuild derived state", systemReconcileHelp),
		"system reconcile summaries": declared(meta, newSystemReconcileSummaries),
		"monitor":                    func() (cli.Command, error) { return &AgentMonitorCommand{Meta: meta()}, nil },
		"fmt":                        func() (cli.Command, error) { return &FormatCommand{Meta: meta()}, nil },
		"ui":                         func() (cli.Command, error) { return &UiCommand{Meta: meta()}, nil },
		"agent-info":                 declared(meta, newAgentInfo),
		"config":                     group("Validate agent configuration", configHelp),
		"operator api":               func() (cli.Command, error) { return &OperatorAPICommand{Meta: meta()}, nil },
		"operator debug":             func() (cli.Command, error) { return &OperatorDebugCommand{Meta: meta()}, nil },
		"operator client-state":      func() (cli.Command, error) { return &OperatorClientStateCommand{Meta: meta()}, nil },

		"var init":           func() (cli.Command, error) { return &VarInitCommand{Meta: meta()}, nil },
		"eval delete":        func() (cli.Command, error) { return &EvalDeleteCommand{Meta: meta()}, nil },
		"node pool init":     func() (cli.Command, error) { return &NodePoolInitCommand{Meta: meta()}, nil },
		"node pool jobs":     func() (cli.Command, error) { return &NodePoolJobsCommand{Meta: meta()}, nil },
		"node pool nodes":    func() (cli.Command, error) { return &NodePoolNodesCommand{Meta: meta()}, nil },
		"namespace inspect":  declared(meta, newNamespaceInspect),
		"job scaling-events": func() (cli.Command, error) { return &JobScalingEventsCommand{Meta: meta()}, nil },
	}
	for name, factory := range compatCommands(ui, meta) {
		all[name] = factory
	}
	return all
}

// groupCommand stands for a noun with subcommands ("job", "acl token"):
// run alone it shows its help, which lists the subcommands.
type groupCommand struct {
	synopsis string
	help     string
}

func (c *groupCommand) Help() string     { return strings.TrimSpace(c.help) }
func (c *groupCommand) Synopsis() string { return c.synopsis }
func (c *groupCommand) Run([]string) int { return cli.RunResultHelp }

const jobHelp = `
Usage: nomad job <subcommand> [options] [args]

  Submit, inspect, change and remove jobs. Run a subcommand with -h for its
  own options.
`

const jobTagHelp = `
Usage: nomad job tag <subcommand> [options] <job>

  Name a job version so it can be found, reverted to, and kept from garbage
  collection.
`

const jobPeriodicHelp = `
Usage: nomad job periodic <subcommand> [options] [args]

  Interact with periodic jobs: launch one now with "force".
`

const namespaceHelp = `
Usage: nomad namespace <subcommand> [options] [args]

  Create, list, read and delete namespaces.
`

const aclHelp = `
Usage: nomad acl <subcommand> [options] [args]

  Bootstrap the ACL system and manage its policies, tokens and roles.
`

const aclPolicyHelp = `
Usage: nomad acl policy <subcommand> [options] [args]

  Write, read, list and delete ACL policies.
`

const aclTokenHelp = `
Usage: nomad acl token <subcommand> [options] [args]

  Create, read, update and delete ACL tokens.
`

const aclRoleHelp = `
Usage: nomad acl role <subcommand> [options] [args]

  Create, read, update and delete ACL roles.
`

const aclAuthMethodHelp = `
Usage: nomad acl auth-method <subcommand> [options] [args]

  Create, read, update and delete ACL auth methods.
`

const aclBindingRuleHelp = `
Usage: nomad acl binding-rule <subcommand> [options] [args]

  Create, read, update and delete ACL binding rules.
`

const eventHelp = `
Usage: nomad event <subcommand> [options]

  Follow the cluster's event stream, or have the leader deliver selected
  events to webhooks (event sink).
`

const allocHelp = `
Usage: nomad alloc <subcommand> [options] [args]

  Inspect allocations and their service checks, read their tasks' logs, run
  commands in their tasks, signal or restart them, and stop them to be
  replaced.
`

const configHelp = `
Usage: nomad config <subcommand> [options] [args]

  Work with agent configuration files without starting an agent.
`
