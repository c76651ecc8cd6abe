package client

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/structs"
)

// Reading a task's log across rotation. The log is one byte sequence: the archives
// <task>.<type>.<n> oldest (lowest n) first, then the live file <task>.<type>.0. Rotation
// (logrotate.go) copies the live file to the next archive and truncates it; it holds the
// log's lock for writing while it does, and a reader holds it for reading while it looks at
// the files and reads a chunk, so a reader never mixes the bytes from before a truncation
// with those after it: it sees the live file either whole before the rotation (and no new
// archive) or truncated (and the archive that holds what it had).

// FileEventTruncated and FileEventDeleted are upstream's stream frame events.
const (
	FileEventTruncated = "file truncated"
	FileEventDeleted   = "file deleted"
)

// logLocks holds one lock per live log path (logsDir/<task>.<type>). The entries are two
// small values per task log the agent ever rotated or read.
var logLocks sync.Map

func logLock(logsDir, base string) *sync.RWMutex {
	l, _ := logLocks.LoadOrStore(logsDir+"/"+base, &sync.RWMutex{})
	return l.(*sync.RWMutex)
}

// Chunk is what one read of a stream gave: Data read from File, ending at Offset in it, and
// an Event (FileEventTruncated, FileEventDeleted) to report before the data.
type Chunk struct {
	Data   []byte
	File   string
	Offset int64
	Event  string
}

// TaskLogReader reads a task's log, archives then live file, from a position, and follows
// the live file through rotations.
type TaskLogReader struct {
	root    *os.Root
	lock    *sync.RWMutex
	base    string
	relBase string // the log's path relative to the allocation directory, for frames
	// cur is the archive being read, 0 for the live file; pos the offset in it.
	cur int
	pos int64
	// seen is the highest archive index that existed when reading moved to the live file:
	// an archive above it is a rotation of what was being read.
	seen int
}

// OpenTaskLogReader opens a task's stdout or stderr log for reading from offset bytes after
// its start, or before its end when fromEnd, counting the archives of rotated output.
func (c *Client) OpenTaskLogReader(allocID, task, logType string, offset int64, fromEnd bool) (*TaskLogReader, error) {
	if logType != "stdout" && logType != "stderr" {
		return nil, structs.BadRequest("invalid log type %q: stdout or stderr", logType)
	}
	for _, part := range []string{allocID, task} {
		if err := allocdir.CheckElem(part); err != nil {
			return nil, structs.BadRequest("invalid allocation ID or task name %q", part)
		}
	}
	if err := c.errLogsDisabled(allocID, task); err != nil {
		return nil, err
	}
	logsDir, err := allocdir.Join(c.config.AllocDir, allocID, "alloc", "logs")
	if err != nil {
		return nil, structs.BadRequest("invalid allocation ID: %v", err)
	}
	root, err := os.OpenRoot(logsDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, noLogError(allocID, task, logType)
		}
		return nil, err
	}
	base := task + "." + logType
	r := &TaskLogReader{root: root, lock: logLock(logsDir, base), base: base, relBase: "alloc/logs/" + base}
	if err := r.seek(offset, fromEnd); err != nil {
		root.Close()
		if errors.Is(err, os.ErrNotExist) {
			return nil, noLogError(allocID, task, logType)
		}
		return nil, err
	}
	return r, nil
}

func noLogError(allocID, task, logType string) error {
	return &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
		Msg: fmt.Sprintf("no %s log for task %q of allocation %s on this node", logType, task, allocID)}
}

// Close releases the reader.
func (r *TaskLogReader) Close() error { return r.root.Close() }

func (r *TaskLogReader) name(idx int) string { return r.base + "." + strconv.Itoa(idx) }

// size is the size of the regular file idx; a link or anything else in its place is refused.
func (r *TaskLogReader) size(idx int) (int64, error) {
	info, err := r.root.Lstat(r.name(idx))
	if err != nil {
		return 0, err
	}
	if !info.Mode().IsRegular() {
		return 0, structs.BadRequest("the log file %s is a link or not a regular file: it is not read", r.name(idx))
	}
	return info.Size(), nil
}

// seek places the reader offset bytes from the start (or end) of the whole log.
func (r *TaskLogReader) seek(offset int64, fromEnd bool) error {
	r.lock.RLock()
	defer r.lock.RUnlock()
	archives, err := logArchives(r.root, r.base)
	if err != nil {
		return err
	}
	liveSize, err := r.size(0)
	if err != nil {
		return err
	}
	type seg struct {
		idx  int
		size int64
	}
	var segs []seg
	var total int64
	for _, idx := range archives {
		if s, err := r.size(idx); err == nil {
			segs = append(segs, seg{idx, s})
			total += s
		}
	}
	segs = append(segs, seg{0, liveSize})
	total += liveSize
	at := min(max(offset, 0), total)
	if fromEnd {
		at = total - at
	}
	if len(archives) > 0 {
		r.seen = archives[len(archives)-1]
	}
	for _, s := range segs {
		if s.idx == 0 || at < s.size {
			r.cur, r.pos = s.idx, at
			return nil
		}
		at -= s.size
	}
	return nil
}

// Next reads the next chunk of at most len(buf) bytes. It returns io.EOF when the log has
// nothing more for now (more may come: the caller polls).
func (r *TaskLogReader) Next(buf []byte) (*Chunk, error) {
	r.lock.RLock()
	defer r.lock.RUnlock()
	var event string
	for range 1000 { // bounded: each turn moves to a higher archive index or reads
		if r.cur > 0 {
			// An error is no answer here: the archive is done, was removed by max_files, or
			// is not a regular file (which is not read). On to the next one, or the live file.
			if n, _ := r.readAt(r.cur, buf); n > 0 {
				return &Chunk{Data: buf[:n], File: r.relBase + "." + strconv.Itoa(r.cur), Offset: r.pos, Event: event}, nil
			}
			archives, err := logArchives(r.root, r.base)
			if err != nil {
				return nil, err
			}
			next := 0
			for _, idx := range archives {
				if idx > r.cur {
					next = idx
					break
				}
			}
			r.cur, r.pos = next, 0
			if next == 0 && len(archives) > 0 {
				r.seen = archives[len(archives)-1]
			}
			continue
		}
		archives, err := logArchives(r.root, r.base)
		if err != nil {
			return nil, err
		}
		for _, idx := range archives {
			if idx > r.seen {
				// The live file was rotated: what was being read is now this archive,
				// at the same offset.
				r.cur, r.seen, event = idx, idx, FileEventTruncated
				break
			}
		}
		if r.cur > 0 {
			continue
		}
		size, err := r.size(0)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return &Chunk{File: r.relBase + ".0", Event: FileEventDeleted}, io.EOF
			}
			return nil, err
		}
		if size < r.pos {
			// Truncated without an archive (max_files = 1): what it holds is new.
			r.pos, event = 0, FileEventTruncated
		}
		n, err := r.readAt(0, buf)
		if n > 0 || event != "" {
			return &Chunk{Data: buf[:n], File: r.relBase + ".0", Offset: r.pos, Event: event}, nil
		}
		if err == nil {
			err = io.EOF
		}
		return nil, err
	}
	return nil, io.EOF
}

// readAt reads file idx at the reader's position and advances it.
func (r *TaskLogReader) readAt(idx int, buf []byte) (int, error) {
	f, err := r.root.OpenFile(r.name(idx), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !info.Mode().IsRegular() {
		return 0, structs.BadRequest("the log file %s is not a regular file", r.name(idx))
	}
	n, err := f.ReadAt(buf, r.pos)
	r.pos += int64(n)
	if n > 0 {
		return n, nil
	}
	return n, err
}
