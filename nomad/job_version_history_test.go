package nomad

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// The replay of issue 32 item 3: a developer removed version 0's tag and pushed versions until
// it fell out of the store, and nothing told who did. Untagging now needs purge-job, and the
// untag and the prune that follows are events naming their actors.
func TestSecurity_UntagNeedsPurgeJobAndHistoryLossIsPublished(t *testing.T) {
	srv, mgmt := testACLServer(t, func(c *Config) { c.JobTrackedVersions = 2 })
	dev := clientToken(t, srv, mgmt, "dev", `namespace "default" { capabilities = ["submit-job", "read-job", "list-jobs"] }`)
	tagger := clientToken(t, srv, mgmt, "tagger", `namespace "default" { capabilities = ["tag-job-version"] }`)
	purger := clientToken(t, srv, mgmt, "purger", `namespace "default" { capabilities = ["purge-job", "submit-job"] }`)

	registerJob(t, srv, mgmt, mock.Job())
	untag := func(token string) error {
		var reply structs.JobTagResponse
		return srv.Endpoints.Job.TagVersion(&structs.JobTagRequest{JobID: "web", Name: "v0tag", Unset: true,
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: token}}, &reply)
	}
	var tagReply structs.JobTagResponse
	must.NoError(t, srv.Endpoints.Job.TagVersion(&structs.JobTagRequest{JobID: "web", Name: "v0tag", Version: new(uint64(0)),
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: dev.SecretID}}, &tagReply))
	for i := 1; i <= 2; i++ {
		job := mock.Job()
		job.Meta = map[string]string{"rev": fmt.Sprint(i)}
		registerJob(t, srv, dev.SecretID, job)
	}

	for _, tc := range []struct{ name, token string }{{"submit-job", dev.SecretID}, {"tag-job-version", tagger.SecretID}} {
		t.Run("untag refused with "+tc.name, func(t *testing.T) {
			before := srv.State().LatestIndex()
			err := untag(tc.token)
			must.EqError(t, err, `Permission denied: purge-job capability required in namespace "default"`)
			must.Eq(t, 403, structs.ErrorCode(err))
			must.Eq(t, before, srv.State().LatestIndex())
		})
	}

	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{
		Topics: map[structs.Topic][]string{structs.TopicJob: {"web"}}, Namespace: "default",
		Index: srv.State().LatestIndex() + 1, AuthToken: mgmt,
	})
	must.NoError(t, err)
	defer sub.Unsubscribe()

	// Versions 1 and 2 fill the window, so the untag itself lets version 0 go.
	must.NoError(t, untag(purger.SecretID))
	v0, err := srv.State().JobByIDAndVersion(nil, "default", "web", 0)
	must.NoError(t, err)
	must.Nil(t, v0)
	// The next register pushes version 1 out, by the developer's hand.
	job := mock.Job()
	job.Meta = map[string]string{"rev": "3"}
	registerJob(t, srv, dev.SecretID, job)

	type seen struct {
		typ     string
		version uint64
		actor   string
		tag     string
	}
	want := []seen{
		{structs.TypeJobVersionUntagged, 0, "purger", "v0tag"},
		{structs.TypeJobVersionPruned, 0, "purger", ""},
		{"JobRegistered", 3, "dev", ""},
		{structs.TypeJobVersionPruned, 1, "dev", ""},
	}
	var got []seen
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for len(got) < len(want) {
		batch, err := sub.Next(ctx)
		must.NoError(t, err)
		for _, e := range batch.Events {
			switch p := e.Payload.(type) {
			case *structs.JobVersionEvent:
				s := seen{typ: e.Type, version: p.Job.Version, actor: p.Actor.Name}
				if p.RemovedTag != nil {
					s.tag = p.RemovedTag.Name
				}
				got = append(got, s)
			case *structs.JobEvent:
				got = append(got, seen{typ: e.Type, version: p.Job.Version, actor: p.Actor.Name})
			}
		}
	}
	must.Eq(t, want, got)
}

func TestJobEndpoint_TagDescriptionBounded(t *testing.T) {
	srv := testServer(t, nil)
	registerJob(t, srv, "", mock.Job())
	cases := []struct {
		name    string
		size    int
		wantErr string
	}{
		{name: "at the limit", size: structs.JobVersionTagMaxDescription},
		{name: "above the limit", size: structs.JobVersionTagMaxDescription + 1, wantErr: "tag description: at most 1024 bytes, got 1025"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reply structs.JobTagResponse
			err := srv.Endpoints.Job.TagVersion(&structs.JobTagRequest{JobID: "web", Name: fmt.Sprint("t", i),
				Description: strings.Repeat("d", tc.size), WriteRequest: structs.WriteRequest{Namespace: "default"}}, &reply)
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.EqError(t, err, tc.wantErr)
			must.Eq(t, 400, structs.ErrorCode(err))
		})
	}
}

// A version carries one tag, so naming a tagged version anew removes its tag: that is an
// untag, needing purge-job and published with its actor like one. Naming it again with the
// same name (a new description) and naming an untagged version stay submit-job's.
func TestSecurity_TagReplaceNeedsPurgeJobAndIsPublished(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	dev := clientToken(t, srv, mgmt, "dev", `namespace "default" { capabilities = ["submit-job", "read-job", "list-jobs"] }`)
	purger := clientToken(t, srv, mgmt, "purger", `namespace "default" { capabilities = ["purge-job", "submit-job"] }`)
	registerJob(t, srv, mgmt, mock.Job())
	job := mock.Job()
	job.Meta = map[string]string{"rev": "1"}
	registerJob(t, srv, mgmt, job)
	tag := func(token, name string, version *uint64) error {
		var reply structs.JobTagResponse
		return srv.Endpoints.Job.TagVersion(&structs.JobTagRequest{JobID: "web", Name: name, Version: version,
			Description: "d-" + name, WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: token}}, &reply)
	}
	tagOf := func(version uint64) string {
		v, err := srv.State().JobByIDAndVersion(nil, "default", "web", version)
		must.NoError(t, err)
		if v.VersionTag == nil {
			return ""
		}
		return v.VersionTag.Name
	}
	must.NoError(t, tag(mgmt, "golden", new(uint64(0))))
	must.NoError(t, tag(mgmt, "latest", nil))

	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{
		Topics: map[structs.Topic][]string{structs.TopicJob: {"web"}}, Namespace: "default",
		Index: srv.State().LatestIndex() + 1, AuthToken: mgmt,
	})
	must.NoError(t, err)
	defer sub.Unsubscribe()

	cases := []struct {
		name    string
		version *uint64
		newName string
		wantErr string
	}{
		{name: "an old version", version: new(uint64(0)), newName: "mine",
			wantErr: `Permission denied: purge-job capability required in namespace "default" to replace tag "golden" of version 0`},
		{name: "the current version, named", version: new(uint64(1)), newName: "mine",
			wantErr: `Permission denied: purge-job capability required in namespace "default" to replace tag "latest" of version 1`},
		{name: "the current version, unnamed", newName: "mine",
			wantErr: `Permission denied: purge-job capability required in namespace "default" to replace tag "latest" of version 1`},
	}
	for _, tc := range cases {
		t.Run("refused on "+tc.name, func(t *testing.T) {
			before := srv.State().LatestIndex()
			err := tag(dev.SecretID, tc.newName, tc.version)
			must.EqError(t, err, tc.wantErr)
			must.Eq(t, 403, structs.ErrorCode(err))
			must.Eq(t, before, srv.State().LatestIndex())
		})
	}
	t.Run("the same name again", func(t *testing.T) {
		must.NoError(t, tag(dev.SecretID, "golden", new(uint64(0))))
		must.Eq(t, "golden", tagOf(0))
	})
	t.Run("with purge-job", func(t *testing.T) {
		must.NoError(t, tag(purger.SecretID, "renamed", new(uint64(0))))
		must.Eq(t, "renamed", tagOf(0))
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		batch, err := sub.Next(ctx)
		must.NoError(t, err)
		var untags []*structs.JobVersionEvent
		for _, e := range batch.Events {
			if p, ok := e.Payload.(*structs.JobVersionEvent); ok && e.Type == structs.TypeJobVersionUntagged {
				untags = append(untags, p)
			}
		}
		if len(untags) == 0 {
			continue
		}
		// The first untag published is the purger's rename: the same name again was none.
		must.SliceLen(t, 1, untags)
		must.Eq(t, "golden", untags[0].RemovedTag.Name)
		must.Eq(t, "renamed", untags[0].Job.VersionTag.Name)
		must.Eq(t, "purger", untags[0].Actor.Name)
		return
	}
}
