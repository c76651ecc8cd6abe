package structs

import (
	"errors"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestMessageTypes_TableIsComplete(t *testing.T) {
	for mt, info := range MessageTypes {
		must.LessEq(t, MaxMessageType, mt, must.Sprintf("%s (%d) takes a value reserved for entry format markers", info.Name, mt))
		must.NotEq(t, "", info.Name)
		must.NotNil(t, info.New, must.Sprintf("%s has no request constructor", info.Name))
		// Each call must return a fresh value: the leader decodes into it concurrently.
		must.True(t, info.New() != info.New(), must.Sprintf("%s.New returns a shared value", info.Name))
	}
}

func TestSecurity_LogEntryChecksumDetectsEveryFlip(t *testing.T) {
	req := &JobDeregisterRequest{JobID: "web", Purge: true, Actor: &Actor{Name: "alice"}}
	buf, err := EncodeEntry(JobDeregisterRequestType, req)
	must.NoError(t, err)
	e, err := CheckEntry(buf)
	must.NoError(t, err)
	must.True(t, e.Checksummed)
	must.Eq(t, JobDeregisterRequestType, e.Type)

	// A flip anywhere (marker, version, checksum, type or payload) is refused; before
	// checksums a flip in the actor's name decoded cleanly as another name.
	for i := range buf {
		for _, bit := range []byte{0x01, 0x80} {
			damaged := append([]byte(nil), buf...)
			damaged[i] ^= bit
			_, err := CheckEntry(damaged)
			must.Error(t, err, must.Sprintf("flip of bit %02x in byte %d went undetected", bit, i))
		}
	}
}

func TestLogEntry_LegacyFormatStillReads(t *testing.T) {
	req := &JobDeregisterRequest{JobID: "web"}
	legacy, err := Encode(JobDeregisterRequestType, req)
	must.NoError(t, err)
	e, err := CheckEntry(legacy)
	must.NoError(t, err)
	must.False(t, e.Checksummed)
	must.Eq(t, JobDeregisterRequestType, e.Type)
	var got JobDeregisterRequest
	must.NoError(t, Decode(e.Payload, &got))
	must.Eq(t, "web", got.JobID)
}

func TestCheckEntry_Refusals(t *testing.T) {
	deep := any("leaf")
	for range LogCodecMaxDepth + 10 {
		deep = map[string]any{"k": deep}
	}
	deepJob, err := EncodeEntry(JobRegisterRequestType, &JobRegisterRequest{Job: &Job{ID: "deep",
		TaskGroups: []*api.TaskGroup{{Tasks: []*api.Task{{Name: "t", Config: map[string]any{"nested": deep}}}}}}})
	must.NoError(t, err)
	unknown, err := EncodeEntry(120, &JobRegisterRequest{})
	must.NoError(t, err)

	cases := []struct {
		name string
		data []byte
		want error
		text string
	}{
		{name: "empty", data: nil, want: ErrEntryMalformed},
		{name: "unknown marker", data: []byte{0xfe, 1, 2}, want: ErrEntryMalformed},
		{name: "header only", data: []byte{0xff, 1, 0, 0, 0, 0}, want: ErrEntryMalformed},
		{name: "unknown type", data: unknown, want: ErrEntryUnknownType},
		{name: "too deep", data: deepJob, want: ErrEntryUndecodable, text: "nests deeper than the log codec allows"},
		{name: "garbage payload", data: []byte{byte(JobRegisterRequestType), 0xc1}, want: ErrEntryUndecodable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckEntry(tc.data)
			must.True(t, errors.Is(err, tc.want), must.Sprintf("got %v", err))
			must.StrContains(t, err.Error(), tc.text)
		})
	}
}

func TestEntrySchemaVersion(t *testing.T) {
	v, err := EntrySchemaVersion(nil)
	must.NoError(t, err)
	must.Eq(t, 1, v, must.Sprint("an entry without a stamp was written at version 1"))

	v, err = EntrySchemaVersion(EntryExtensions())
	must.NoError(t, err)
	must.Eq(t, SchemaVersion, v)

	// A binary a version ahead reads what an older one stamped.
	v, err = entrySchemaVersion(entryExtensions(SchemaVersion), SchemaVersion+1)
	must.NoError(t, err)
	must.Eq(t, SchemaVersion, v)

	for name, ext := range map[string][]byte{
		"newer version":        EntryExtensionsAt(SchemaVersion + 1),
		"unknown stamp format": {entryExtFormat + 1, 1},
	} {
		_, err := EntrySchemaVersion(ext)
		must.ErrorIs(t, err, ErrEntryNewerSchema, must.Sprint(name))
		must.StrContains(t, err.Error(), "upgrade this server", must.Sprint(name))
	}
	for _, ext := range [][]byte{{entryExtFormat}, {entryExtFormat, 0}, {entryExtFormat, 0x80}} {
		_, err := EntrySchemaVersion(ext)
		must.ErrorIs(t, err, ErrEntryMalformed, must.Sprintf("%x", ext))
	}
}
