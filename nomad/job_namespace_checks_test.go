package nomad

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestCheckNamespaceCapabilities(t *testing.T) {
	withNetwork := func(mode string) *structs.Job {
		job := mock.Job()
		job.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: mode}}
		return job
	}
	withDrivers := func(drivers ...string) *structs.Job {
		job := mock.Job()
		tasks := []*api.Task{}
		for i, d := range drivers {
			tasks = append(tasks, &api.Task{Name: string(rune('a' + i)), Driver: d})
		}
		job.TaskGroups[0].Tasks = tasks
		return job
	}
	cases := []struct {
		name    string
		caps    *structs.NamespaceCapabilities
		job     *structs.Job
		wantErr string
	}{
		{name: "no capabilities", job: mock.Job()},
		{name: "empty capabilities", caps: &structs.NamespaceCapabilities{}, job: mock.Job()},
		{name: "disabled driver", caps: &structs.NamespaceCapabilities{DisabledTaskDrivers: []string{"raw_exec"}},
			job: mock.Job(), wantErr: `used task driver "raw_exec" is not allowed in namespace "team"`},
		{name: "disabled driver spelled in capitals", caps: &structs.NamespaceCapabilities{DisabledTaskDrivers: []string{"raw_exec"}},
			job: withDrivers("RAW_EXEC"), wantErr: `used task driver "RAW_EXEC" is not allowed in namespace "team"`},
		{name: "driver outside the enabled list", caps: &structs.NamespaceCapabilities{EnabledTaskDrivers: []string{"docker", "exec"}},
			job: mock.Job(), wantErr: `used task driver "raw_exec" is not allowed in namespace "team"`},
		{name: "driver on the enabled list", caps: &structs.NamespaceCapabilities{EnabledTaskDrivers: []string{"exec", "raw_exec"}},
			job: mock.Job()},
		{name: "on both lists the deny wins", caps: &structs.NamespaceCapabilities{
			EnabledTaskDrivers: []string{"raw_exec"}, DisabledTaskDrivers: []string{"raw_exec"}},
			job: mock.Job(), wantErr: `used task driver "raw_exec" is not allowed in namespace "team"`},
		{name: "two refused drivers named once each", caps: &structs.NamespaceCapabilities{EnabledTaskDrivers: []string{"exec"}},
			job: withDrivers("docker", "exec", "raw_exec", "docker"), wantErr: `used task drivers ["docker" "raw_exec"] are not allowed in namespace "team"`},
		{name: "disabled network mode", caps: &structs.NamespaceCapabilities{DisabledNetworkModes: []string{"host"}},
			job: withNetwork("host"), wantErr: `used group network mode "host" is not allowed in namespace "team"`},
		{name: "network without a mode is host", caps: &structs.NamespaceCapabilities{DisabledNetworkModes: []string{"host"}},
			job: withNetwork(""), wantErr: `used group network mode "host" is not allowed in namespace "team"`},
		{name: "network mode outside the enabled list", caps: &structs.NamespaceCapabilities{EnabledNetworkModes: []string{"bridge"}},
			job: withNetwork("cni/mynet"), wantErr: `used group network mode "cni/mynet" is not allowed in namespace "team"`},
		{name: "network mode on the enabled list", caps: &structs.NamespaceCapabilities{EnabledNetworkModes: []string{"bridge"}},
			job: withNetwork("bridge")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkNamespaceCapabilities(&structs.Namespace{Name: "team", Capabilities: tc.caps}, tc.job)
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.EqError(t, err, tc.wantErr)
			must.Eq(t, 400, structs.ErrorCode(err))
		})
	}
}

// A namespace that disables raw_exec keeps it out on every path by which a caller asks for a
// spec to run: register, plan, revert to a version registered before the namespace changed,
// and dispatch of a parent registered before. Management tokens are held to it too: the
// setting is about the namespace, not the caller.
func TestSecurity_NamespaceDisabledDriverRefused(t *testing.T) {
	const ns = "team"
	srv, mgmt := testACLServer(t, nil)
	dev := clientToken(t, srv, mgmt, "dev", `namespace "team" { capabilities = ["submit-job", "dispatch-job", "read-job", "scale-job"] }`).SecretID
	setCaps := func(t *testing.T, caps *structs.NamespaceCapabilities) {
		t.Helper()
		var reply structs.GenericResponse
		must.NoError(t, srv.Endpoints.Namespace.Upsert(&structs.NamespaceUpsertRequest{
			Namespaces:   []*structs.Namespace{{Name: ns, Capabilities: caps}},
			WriteRequest: structs.WriteRequest{AuthToken: mgmt},
		}, &reply))
	}
	rawExecJob := func(id string) *structs.Job {
		job := mock.JobWithID(id)
		job.Namespace = ns
		return job
	}
	disabled := &structs.NamespaceCapabilities{DisabledTaskDrivers: []string{"raw_exec"}}
	const wantErr = `used task driver "raw_exec" is not allowed in namespace "team"`

	cases := []struct {
		name string
		// setup runs while the namespace still allows raw_exec.
		setup func(t *testing.T)
		call  func(token string) error
	}{
		{
			name: "register",
			call: func(token string) error {
				var reply structs.JobRegisterResponse
				return srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: rawExecJob("reg"),
					WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: token}}, &reply)
			},
		},
		{
			name: "plan",
			call: func(token string) error {
				var reply structs.JobPlanResponse
				return srv.Endpoints.Job.Plan(&structs.JobPlanRequest{Job: rawExecJob("plan"),
					WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: token}}, &reply)
			},
		},
		{
			name: "revert to a version from before the change",
			setup: func(t *testing.T) {
				registerJob(t, srv, mgmt, rawExecJob("rev"))
				job := rawExecJob("rev")
				job.TaskGroups[0].Tasks[0].Driver = "exec"
				registerJob(t, srv, mgmt, job)
			},
			call: func(token string) error {
				var reply structs.JobRegisterResponse
				return srv.Endpoints.Job.Revert(&structs.JobRevertRequest{JobID: "rev", JobVersion: 0,
					WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: token}}, &reply)
			},
		},
		{
			name: "dispatch of a parent registered before the change",
			setup: func(t *testing.T) {
				job := mock.BatchJob("param")
				job.Namespace = ns
				job.ParameterizedJob = &api.ParameterizedJobConfig{}
				registerJob(t, srv, mgmt, job)
			},
			call: func(token string) error {
				var reply structs.JobDispatchResponse
				return srv.Endpoints.Job.Dispatch(&structs.JobDispatchRequest{JobID: "param",
					WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: token}}, &reply)
			},
		},
		{
			name: "scale up of a job registered before the change",
			setup: func(t *testing.T) {
				registerJob(t, srv, mgmt, rawExecJob("scaled"))
			},
			call: func(token string) error {
				var reply structs.JobRegisterResponse
				return srv.Endpoints.Job.Scale(&structs.JobScaleRequest{JobID: "scaled", Count: new(int64(2)),
					Target: map[string]string{"Group": "web"}, Message: "more",
					WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: token}}, &reply)
			},
		},
		{
			name: "forced launch of a periodic parent registered before the change",
			setup: func(t *testing.T) {
				job := mock.BatchJob("cron")
				job.Namespace = ns
				job.Periodic = &api.PeriodicConfig{Spec: new("0 0 1 1 *"), SpecType: new("cron")}
				registerJob(t, srv, mgmt, job)
			},
			call: func(token string) error {
				var reply structs.PeriodicForceResponse
				return srv.Endpoints.Job.PeriodicForce(&structs.JobPeriodicForceRequest{JobID: "cron",
					WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: token}}, &reply)
			},
		},
	}
	setCaps(t, nil)
	for _, tc := range cases {
		if tc.setup != nil {
			tc.setup(t)
		}
	}
	setCaps(t, disabled)
	for _, tc := range cases {
		for _, token := range []struct{ name, secret string }{{"developer", dev}, {"management", mgmt}} {
			t.Run(tc.name+" by "+token.name, func(t *testing.T) {
				before := srv.State().LatestIndex()
				err := tc.call(token.secret)
				must.EqError(t, err, wantErr)
				must.Eq(t, 400, structs.ErrorCode(err))
				must.Eq(t, before, srv.State().LatestIndex(), must.Sprint("a refused request writes nothing"))
			})
		}
	}

	t.Run("scale down is let through", func(t *testing.T) {
		setCaps(t, nil)
		registerJob(t, srv, mgmt, rawExecJob("winding-down"))
		setCaps(t, disabled)
		var reply structs.JobRegisterResponse
		must.NoError(t, srv.Endpoints.Job.Scale(&structs.JobScaleRequest{JobID: "winding-down", Count: new(int64(0)),
			Target: map[string]string{"Group": "web"}, Message: "wind down",
			WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: dev}}, &reply))
	})

	t.Run("validate reports it", func(t *testing.T) {
		var reply structs.JobValidateResponse
		must.NoError(t, srv.Endpoints.Job.Validate(&structs.JobValidateRequest{Job: rawExecJob("val"),
			WriteRequest: structs.WriteRequest{Namespace: ns, AuthToken: dev}}, &reply))
		must.SliceContains(t, reply.ValidationErrors, wantErr)
	})

	// The same requests pass once the namespace allows the driver again, so the refusals
	// above come from the setting and nothing else.
	setCaps(t, &structs.NamespaceCapabilities{EnabledTaskDrivers: []string{"raw_exec", "exec"}})
	for _, tc := range cases {
		t.Run(tc.name+" allowed", func(t *testing.T) {
			must.NoError(t, tc.call(dev))
		})
	}
}
