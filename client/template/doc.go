// Package template renders a task's template blocks with consul-template's runner before
// the task starts, and keeps them rendered while it runs: a change of the data a template
// reads (a Nomad variable, a Nomad service) renders it again and asks the task runner to
// apply the template's change_mode.
//
// Every file it writes or reads goes through client/allocdir, so a destination or source
// that would leave the allocation's directory, by ".." or by a symbolic link, is refused. The Nomad
// functions (nomadVar, nomadService, ...) call the agent's HTTP API with the task's workload
// identity, so the job's ACLs decide what a template may read; the token is a secret and
// never appears in a log line or an error. Consul and Vault functions are refused before
// anything renders: no Consul or Vault is configured, and consul-template would otherwise
// wait for one forever.
//
// It imports client/allocdir, the official api types and consul-template (its manager,
// config and renderer packages) only.
package template
