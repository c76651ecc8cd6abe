package client

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// logTestClient is a client with allocation "a1" whose alloc/logs holds files.
func logTestClient(t *testing.T, files map[string]string) (*Client, string) {
	t.Helper()
	allocRoot := t.TempDir()
	logs := filepath.Join(allocRoot, "a1", "alloc", "logs")
	must.NoError(t, os.MkdirAll(logs, 0o755))
	for name, body := range files {
		must.NoError(t, os.WriteFile(filepath.Join(logs, name), []byte(body), 0o644))
	}
	return &Client{config: &Config{AllocDir: allocRoot}}, logs
}

// readAll reads r until it has nothing more, returning the data and the events seen.
func readAll(t *testing.T, r interface {
	Next([]byte) (*Chunk, error)
}, bufSize int) (string, []string) {
	t.Helper()
	var data []byte
	var events []string
	buf := make([]byte, bufSize)
	for range 10000 {
		c, err := r.Next(buf)
		if c != nil {
			data = append(data, c.Data...)
			if c.Event != "" {
				events = append(events, c.Event)
			}
		}
		if errors.Is(err, io.EOF) {
			return string(data), events
		}
		must.NoError(t, err)
	}
	t.Fatal("the reader never reached the end")
	return "", nil
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must.NoError(t, err)
	_, err = f.WriteString(s)
	must.NoError(t, err)
	must.NoError(t, f.Close())
}

func TestTaskLogReader_SpansArchives(t *testing.T) {
	files := map[string]string{"web.stdout.1": "aaaa", "web.stdout.2": "bbbb", "web.stdout.0": "cc", "web.stderr.0": "err"}
	cases := []struct {
		name    string
		offset  int64
		fromEnd bool
		want    string
	}{
		{name: "whole log", want: "aaaabbbbcc"},
		{name: "from inside the second archive", offset: 6, want: "bbcc"},
		{name: "at an archive boundary", offset: 4, want: "bbbbcc"},
		{name: "into the live file", offset: 9, want: "c"},
		{name: "past the end", offset: 100, want: ""},
		{name: "last bytes across a boundary", offset: 3, fromEnd: true, want: "bcc"},
		{name: "from the end, more than there is", offset: 100, fromEnd: true, want: "aaaabbbbcc"},
		{name: "end", fromEnd: true, want: ""},
	}
	c, _ := logTestClient(t, files)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, bufSize := range []int{1, 3, 64} {
				r, err := c.OpenTaskLogReader("a1", "web", "stdout", tc.offset, tc.fromEnd)
				must.NoError(t, err)
				got, events := readAll(t, r, bufSize)
				r.Close()
				must.Eq(t, tc.want, got, must.Sprintf("buffer of %d", bufSize))
				must.SliceEmpty(t, events)
			}
		})
	}
}

func TestTaskLogReader_FollowsRotation(t *testing.T) {
	c, logs := logTestClient(t, map[string]string{"web.stdout.0": "0123"})
	live := filepath.Join(logs, "web.stdout.0")
	limits := logLimits{maxFiles: 3, maxSize: 10}

	r, err := c.OpenTaskLogReader("a1", "web", "stdout", 0, false)
	must.NoError(t, err)
	defer r.Close()
	got, _ := readAll(t, r, 4)
	must.Eq(t, "0123", got)

	// Written after the reader's last read, then rotated away before it reads again.
	appendTo(t, live, "456789")
	must.NoError(t, rotateLog(logs, "web.stdout", limits))
	appendTo(t, live, "new")
	got, events := readAll(t, r, 4)
	must.Eq(t, "456789new", got)
	must.Eq(t, []string{FileEventTruncated}, events)

	// Two rotations between reads, the live file regrown past where the reader was.
	appendTo(t, live, "ABCDEFGHIJK")
	must.NoError(t, rotateLog(logs, "web.stdout", limits))
	appendTo(t, live, "LMNOPQRSTUV")
	must.NoError(t, rotateLog(logs, "web.stdout", limits))
	appendTo(t, live, "WXYZ0123456789")
	got, events = readAll(t, r, 5)
	must.Eq(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", got)
	must.Eq(t, []string{FileEventTruncated}, events)

	// A new reader from the start sees what max_files kept: two archives and the live file.
	r2, err := c.OpenTaskLogReader("a1", "web", "stdout", 0, false)
	must.NoError(t, err)
	defer r2.Close()
	got, _ = readAll(t, r2, 64)
	must.Eq(t, "newABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", got)
}

func TestTaskLogReader_TruncatedWithoutArchive(t *testing.T) {
	c, logs := logTestClient(t, map[string]string{"web.stdout.0": "0123456789ab"})
	r, err := c.OpenTaskLogReader("a1", "web", "stdout", 0, false)
	must.NoError(t, err)
	defer r.Close()
	got, _ := readAll(t, r, 64)
	must.Eq(t, "0123456789ab", got)
	must.NoError(t, rotateLog(logs, "web.stdout", logLimits{maxFiles: 1, maxSize: 10}))
	appendTo(t, filepath.Join(logs, "web.stdout.0"), "fresh")
	got, events := readAll(t, r, 64)
	must.Eq(t, "fresh", got)
	must.Eq(t, []string{FileEventTruncated}, events)
}

func TestTaskLogReader_Refusals(t *testing.T) {
	c, logs := logTestClient(t, map[string]string{"web.stdout.0": "x"})
	outside := filepath.Join(t.TempDir(), "host")
	must.NoError(t, os.WriteFile(outside, []byte("host secret"), 0o600))
	must.NoError(t, os.Symlink(outside, filepath.Join(logs, "link.stdout.0")))
	cases := []struct {
		name, alloc, task, typ string
		wantCode               int
	}{
		{name: "bad type", alloc: "a1", task: "web", typ: "stdin", wantCode: http.StatusBadRequest},
		{name: "task climbs", alloc: "a1", task: "..", typ: "stdout", wantCode: http.StatusBadRequest},
		{name: "alloc climbs", alloc: "..", task: "web", typ: "stdout", wantCode: http.StatusBadRequest},
		{name: "no such task", alloc: "a1", task: "db", typ: "stdout", wantCode: http.StatusNotFound},
		{name: "no such alloc", alloc: "a2", task: "web", typ: "stdout", wantCode: http.StatusNotFound},
		{name: "log replaced by a link", alloc: "a1", task: "link", typ: "stdout", wantCode: http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.OpenTaskLogReader(tc.alloc, tc.task, tc.typ, 0, false)
			must.Error(t, err)
			must.Eq(t, tc.wantCode, structs.ErrorCode(err), must.Sprint(err))
		})
	}
}

func TestFileStreamReader_TruncateAndDelete(t *testing.T) {
	c, _ := fsTestClient(t)
	f, err := c.FSOpen("a1", "web/local/hello.txt")
	must.NoError(t, err)
	defer f.Close()
	r, err := f.StreamReader(6, false)
	must.NoError(t, err)
	got, _ := readAll(t, r, 4)
	must.Eq(t, "world\n", got)

	path := filepath.Join(c.config.AllocDir, "a1", "web", "local", "hello.txt")
	must.NoError(t, os.WriteFile(path, []byte("hi"), 0o644))
	got, events := readAll(t, r, 4)
	must.Eq(t, "hi", got)
	must.Eq(t, []string{FileEventTruncated}, events)

	must.NoError(t, os.Remove(path))
	chunk, err := r.Next(make([]byte, 4))
	must.ErrorIs(t, err, io.EOF)
	must.NotNil(t, chunk)
	must.Eq(t, FileEventDeleted, chunk.Event)
}

// An archive a task replaced with a link is skipped, never read through.
func TestTaskLogReader_SkipsLinkedArchive(t *testing.T) {
	c, logs := logTestClient(t, map[string]string{"web.stdout.1": "a\n", "web.stdout.0": "live\n"})
	outside := filepath.Join(t.TempDir(), "host")
	must.NoError(t, os.WriteFile(outside, []byte("host secret\n"), 0o600))
	must.NoError(t, os.Symlink(outside, filepath.Join(logs, "web.stdout.2")))
	r, err := c.OpenTaskLogReader("a1", "web", "stdout", 0, false)
	must.NoError(t, err)
	defer r.Close()
	got, _ := readAll(t, r, 64)
	must.Eq(t, "a\nlive\n", got)
}
