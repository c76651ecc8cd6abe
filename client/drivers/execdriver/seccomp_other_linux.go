//go:build linux && !amd64 && !arm64

package execdriver

// No rules are written for this architecture: tasks run without a seccomp filter.
const (
	seccompArch   = 0
	seccompX32Bit = 0
)

var seccompRules []seccompRule
