// Package fingerprint finds out what a client node offers the scheduler: its CPU, memory,
// disk and network, the kernel and OS it runs, and the resources the operator reserves.
//
// Everything is a pure function of a Sources value (readers of /proc files, statfs, the
// hostname), so tests describe a machine instead of depending on the host's. It imports
// structs and the official client's wire types only.
package fingerprint
