package client

import (
	"fmt"
	"os/user"
	"path/filepath"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// fakeAccounts resolves the accounts of a made-up host by name or by uid.
func fakeAccounts(name string) (*user.User, error) {
	accounts := []*user.User{{Username: "root", Uid: "0"}, {Username: "toor", Uid: "0"}, {Username: "nobody", Uid: "65534"}, {Username: "app", Uid: "1000"}}
	for _, u := range accounts {
		if u.Username == name || u.Uid == name {
			return u, nil
		}
	}
	return nil, user.UnknownUserError(name)
}

func TestSecurity_UserDenylist(t *testing.T) {
	cases := []struct {
		name    string
		options map[string]string
		driver  string
		user    string
		denied  bool
	}{
		{name: "root for exec by default", driver: "exec", user: "root", denied: true},
		{name: "Administrator by default", driver: "exec", user: "Administrator", denied: true},
		{name: "uid 0 by number", driver: "exec", user: "0", denied: true},
		{name: "another name of uid 0", driver: "exec", user: "toor", denied: true},
		{name: "qemu and java are checked by default", driver: "java", user: "root", denied: true},
		{name: "an ordinary user", driver: "exec", user: "app"},
		{name: "the driver's default user", driver: "exec", user: ""},
		{name: "an unknown user is the driver's to refuse", driver: "exec", user: "ghost"},
		{name: "raw_exec is not checked by default", driver: "raw_exec", user: "root"},
		{name: "docker is not checked by default", driver: "docker", user: "root"},
		{name: "an empty denylist allows root", options: map[string]string{OptionUserDenylist: ""}, driver: "exec", user: "root"},
		{name: "a denylist replaces the default", options: map[string]string{OptionUserDenylist: "app, nobody"}, driver: "exec", user: "root"},
		{name: "a denylist of one's own", options: map[string]string{OptionUserDenylist: "app,nobody"}, driver: "exec", user: "1000", denied: true},
		{name: "the older option name", options: map[string]string{optionUserBlacklist: "app"}, driver: "exec", user: "app", denied: true},
		{name: "the new name wins over the old", options: map[string]string{OptionUserDenylist: "", optionUserBlacklist: "root"}, driver: "exec", user: "root"},
		{name: "checked drivers of one's own", options: map[string]string{OptionUserCheckedDrivers: "exec,raw_exec"}, driver: "raw_exec", user: "root", denied: true},
		{name: "docker checked when asked", options: map[string]string{OptionUserCheckedDrivers: "docker"}, driver: "docker", user: "root", denied: true},
		{name: "a group does not hide a denied user", options: map[string]string{OptionUserCheckedDrivers: "docker"}, driver: "docker", user: "root:root", denied: true},
		{name: "nor does a uid with a group", options: map[string]string{OptionUserCheckedDrivers: "docker"}, driver: "docker", user: "0:0", denied: true},
		{name: "an ordinary uid and group", options: map[string]string{OptionUserCheckedDrivers: "docker"}, driver: "docker", user: "1000:1000"},
		{name: "exec left out of the checked drivers", options: map[string]string{OptionUserCheckedDrivers: "raw_exec"}, driver: "exec", user: "root"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newUserPolicy(tc.options)
			p.lookup = fakeAccounts
			err := p.check(tc.driver, tc.user)
			if !tc.denied {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, fmt.Sprintf("running as user %q", tc.user))
			must.ErrorContains(t, err, "client option user.denylist")
		})
	}
}

// TestSecurity_UserDenylistFailsTask runs a task as root with a driver the options check: it
// fails before anything of it is created, with an event naming the option.
func TestSecurity_UserDenylistFailsTask(t *testing.T) {
	servers := newFakeServers()
	allocDir := t.TempDir()
	c, err := New(&Config{
		Name: "test", AllocDir: allocDir,
		Drivers:      []drivers.Driver{drivers.Mock{}},
		Options:      map[string]string{OptionUserCheckedDrivers: "mock_driver"},
		MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
	}, servers)
	must.NoError(t, err)
	t.Cleanup(c.Shutdown)
	task := mockTask("t", map[string]any{"run_for": "1h"})
	task.User = "root"
	servers.setAllocs(testAlloc("a1", structs.JobTypeService, task))
	waitFor(t, "the allocation to fail", reportedStatus(servers, "a1", structs.AllocClientStatusFailed))

	ts := servers.lastReport("a1").TaskStates["t"]
	must.True(t, ts.Failed)
	var setup *structs.TaskEvent
	for _, e := range ts.Events {
		must.NotEq(t, structs.TaskEventStarted, e.Type, must.Sprint("the task never starts"))
		if e.Type == structs.TaskEventSetupFailure {
			setup = e
		}
	}
	must.NotNil(t, setup, must.Sprintf("events %v", ts.Events))
	must.StrContains(t, setup.DisplayMessage, "user.denylist")
	must.DirNotExists(t, filepath.Join(allocDir, "a1", "t", "local"))
}
