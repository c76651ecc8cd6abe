// Package allocdir builds the paths of allocation and task directories on a client node.
//
// The agent runs as root, and the names that become path elements (allocation IDs, task
// names, log file names) come from jobs and requests. The servers validate job names, but the
// client must not depend on that: a job stored before the validation existed, a bug, or a
// forged entry would otherwise let a name such as "../../etc" make the agent create, write or
// remove files anywhere on the host. Every such path is built here, and each function refuses
// a name that is not one plain path element and a result outside its root. Opening and
// creating go through os.Root, so a symbolic link planted by a task cannot lead outside
// either. It imports nothing of ours.
package allocdir
