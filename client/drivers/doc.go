// Package drivers runs tasks for the client: raw_exec (a process on the host) and mock_driver
// (a task that only waits, for tests). A driver starts a task and hands back a handle to wait
// for it or kill it. An ExecDriver also runs commands in the context of its tasks (alloc exec)
// and says how isolated they are, which decides the ACL capability exec needs. Drivers of
// their own packages (docker, execdriver) register with RegisterBuiltin and run alloc exec
// sessions with RunExec. It imports structs and client/allocdir only.
package drivers
