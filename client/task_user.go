package client

import (
	"fmt"
	"os/user"
	"strings"
)

// Client options (the agent's `client { options { … } }`) that keep the tasks of some
// drivers from running as privileged accounts. The names and defaults are upstream's.
const (
	OptionUserDenylist       = "user.denylist"
	OptionUserCheckedDrivers = "user.checked_drivers"
	// optionUserBlacklist is upstream's older name of user.denylist, still read when the new
	// one is unset so that existing configurations keep their meaning.
	optionUserBlacklist = "user.blacklist"
)

// Upstream's defaults: a job's author may not pick the host's administrator for a driver
// whose tasks share the host's kernel. Drivers of virtual machines are left out (their user
// is the one inside the guest); raw_exec is left out because enabling it already hands out
// the agent's own user.
var (
	DefaultUserDenylist       = []string{"root", "Administrator"}
	DefaultUserCheckedDrivers = []string{"exec", "qemu", "java"}
)

// userPolicy is the client's answer to "may a task of this driver run as this user".
type userPolicy struct {
	denied  []string
	checked map[string]bool
	// lookup resolves an account by name or number; tests replace it.
	lookup func(string) (*user.User, error)
}

func newUserPolicy(opts map[string]string) userPolicy {
	denied := DefaultUserDenylist
	if v, ok := opts[OptionUserDenylist]; ok {
		denied = splitOption(v)
	} else if v, ok := opts[optionUserBlacklist]; ok {
		denied = splitOption(v)
	}
	checked := DefaultUserCheckedDrivers
	if v, ok := opts[OptionUserCheckedDrivers]; ok {
		checked = splitOption(v)
	}
	p := userPolicy{denied: denied, checked: map[string]bool{}, lookup: lookupAccount}
	for _, d := range checked {
		p.checked[d] = true
	}
	return p
}

// splitOption reads a comma-separated option. An option set to "" is an empty list, not the
// default: that is how an operator allows every user.
func splitOption(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// check refuses a task of a checked driver whose user is denied. The account is compared by
// name and by uid, so that "0", or another name of uid 0, is not a way around "root". An
// empty user is the driver's own default (nobody for exec) and is not checked here.
func (p userPolicy) check(driver, name string) error {
	if name == "" || !p.checked[driver] {
		return nil
	}
	// Docker (and exec) take "user:group"; the group does not make a denied user allowed.
	full := name
	if u, _, ok := strings.Cut(name, ":"); ok {
		name = u
	}
	var uid string
	if u, err := p.lookup(name); err == nil {
		uid = u.Uid
	}
	for _, d := range p.denied {
		same := d == name
		if !same && uid != "" {
			if du, err := p.lookup(d); err == nil && du.Uid == uid {
				same = true
			}
		}
		if same {
			how := ""
			if d != name {
				how = fmt.Sprintf(" (it is the account of %q)", d)
			}
			return fmt.Errorf("running as user %q%s is denied by the client option %s for driver %s (see %s)",
				full, how, OptionUserDenylist, driver, OptionUserCheckedDrivers)
		}
	}
	return nil
}

func lookupAccount(name string) (*user.User, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if u2, err2 := user.LookupId(name); err2 == nil {
			return u2, nil
		}
	}
	return u, err
}
