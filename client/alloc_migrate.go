package client

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/structs"
)

// Migrating an ephemeral disk across nodes (`ephemeral_disk { migrate = true }`): the
// replacement's node asks the servers for the previous allocation's data, chunk by chunk
// (Alloc.MigrateData); the server relays each ask to the previous node's client, which
// answers with a byte range of one gzipped tar of the allocation's alloc/data and each
// task's local/, built once its tasks have stopped and kept for the ranges that follow
// (snapshotCache). Built again (after the agent restarted, or past snapshotKeep) it comes out
// the same (sorted walk, headers made from the files alone), as nothing changes the files.

// defaultEphemeralDiskMB is upstream's ephemeral_disk size, the bound of a migrated disk
// when the group names none.
const defaultEphemeralDiskMB = 300

// migrateWait bounds how long a replacement waits for the previous allocation's tasks to
// stop before it starts without their data.
const migrateWait = 10 * time.Minute

// snapshotKeep is how long a built snapshot is kept for the ranges still to be asked.
const snapshotKeep = 10 * time.Minute

// snapshotCache keeps the snapshot of an allocation, built once into a file of the allocation
// root, while a replacement fetches it range by range: built again for every range, a large
// disk would be compressed once per chunk. A snapshot goes once its last byte was served,
// after snapshotKeep, or when the agent stops.
type snapshotCache struct {
	mu      sync.Mutex
	byAlloc map[string]*cachedSnapshot
}

type cachedSnapshot struct {
	path  string
	size  int64
	built time.Time
}

func (sc *snapshotCache) dropLocked(allocID string) {
	if cs := sc.byAlloc[allocID]; cs != nil {
		_ = os.Remove(cs.path)
		delete(sc.byAlloc, allocID)
	}
}

// clear removes every kept snapshot.
func (sc *snapshotCache) clear() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for id := range sc.byAlloc {
		sc.dropLocked(id)
	}
}

// removeMigrationLeftovers removes the snapshot and download files a previous run of the
// agent left in the allocation root when it did not stop cleanly: nothing refers to them.
func removeMigrationLeftovers(allocRoot string, logger interface{ Warn(string, ...any) }) {
	for _, pattern := range []string{".snapshot-*", ".*.migrate-*"} {
		found, _ := filepath.Glob(filepath.Join(allocRoot, pattern))
		for _, f := range found {
			if err := os.Remove(f); err != nil {
				logger.Warn("removing a migration file a previous run left failed", "path", f, "error", err)
			}
		}
	}
}

// WriteAllocSnapshot writes bytes [offset, offset+limit) of the snapshot of allocation
// allocID's disk to w. An allocation whose tasks still run answers 409: its data is not
// final. maxBytes bounds what the files add up to (a 413 past it).
func (c *Client) WriteAllocSnapshot(allocID string, offset, limit, maxBytes int64, w io.Writer) error {
	if err := allocdir.CheckElem(allocID); err != nil {
		return structs.BadRequest("invalid allocation ID %q", allocID)
	}
	if offset < 0 || limit <= 0 {
		return structs.BadRequest("invalid range: offset %d, limit %d", offset, limit)
	}
	r := c.runner(allocID)
	if r != nil && !r.isDone() {
		return structs.NewErrCode(http.StatusConflict, "allocation %s still runs tasks: its data is taken once they have stopped", allocID)
	}
	sc := &c.snapshots
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.byAlloc == nil {
		sc.byAlloc = map[string]*cachedSnapshot{}
	}
	for id, cs := range sc.byAlloc {
		if time.Since(cs.built) > snapshotKeep {
			sc.dropLocked(id)
		}
	}
	cs := sc.byAlloc[allocID]
	if cs == nil {
		var err error
		if cs, err = c.buildSnapshot(allocID, maxBytes); err != nil {
			return err
		}
		sc.byAlloc[allocID] = cs
	}
	f, err := os.Open(cs.path)
	if err != nil {
		sc.dropLocked(allocID)
		return err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.CopyN(w, f, limit); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if offset+limit >= cs.size {
		sc.dropLocked(allocID)
	}
	return nil
}

// buildSnapshot writes the snapshot of allocation allocID to a file of the allocation root.
func (c *Client) buildSnapshot(allocID string, maxBytes int64) (*cachedSnapshot, error) {
	dir, err := allocdir.Join(c.config.AllocDir, allocID)
	if err != nil {
		return nil, structs.BadRequest("invalid allocation ID %q", allocID)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, structs.NewErrCode(http.StatusNotFound, "allocation %s has no directory on this node", allocID)
		}
		return nil, err
	}
	defer root.Close()
	f, err := os.CreateTemp(c.config.AllocDir, ".snapshot-*")
	if err != nil {
		return nil, err
	}
	err = writeSnapshot(root, f, maxBytes)
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekCurrent)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return nil, err
	}
	return &cachedSnapshot{path: f.Name(), size: size, built: time.Now()}, nil
}

// snapshotDirs are the directories of an allocation a snapshot holds: alloc/data and each
// task's local/ (a task is a directory of the allocation other than alloc).
func snapshotDirs(root *os.Root) ([]string, error) {
	dirs := []string{"alloc/data"}
	f, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	entries, err := f.ReadDir(-1)
	_ = f.Close()
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if e.IsDir() && e.Name() != "alloc" && allocdir.CheckElem(e.Name()) == nil {
			dirs = append(dirs, e.Name()+"/local")
		}
	}
	return dirs, nil
}

// writeSnapshot writes the gzipped tar of root's snapshot directories: directories and
// regular files only (a link a task left is not followed nor kept), with their permissions,
// owners and times.
func writeSnapshot(root *os.Root, w io.Writer, maxBytes int64) error {
	dirs, err := snapshotDirs(root)
	if err != nil {
		return err
	}
	gz, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	var total int64
	for _, top := range dirs {
		if fi, err := root.Lstat(top); err != nil || !fi.IsDir() {
			continue
		}
		err := fs.WalkDir(root.FS(), top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			hdr := &tar.Header{Name: p, Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime().Truncate(time.Second), Format: tar.FormatPAX}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
			}
			switch {
			case d.IsDir():
				hdr.Typeflag, hdr.Name = tar.TypeDir, p+"/"
				return tw.WriteHeader(hdr)
			case fi.Mode().IsRegular():
				if total += fi.Size(); total > maxBytes {
					return structs.NewErrCode(http.StatusRequestEntityTooLarge, "the allocation's data is larger than its ephemeral disk (%d MB)", maxBytes>>20)
				}
				f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
				if err != nil {
					return err
				}
				defer f.Close()
				hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
				if err := tw.WriteHeader(hdr); err != nil {
					return err
				}
				_, err = io.CopyN(tw, f, fi.Size())
				return err
			default:
				return nil // links, sockets, devices: not part of the data
			}
		})
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// restoreSnapshot unpacks a snapshot into root, an allocation directory being built. Every
// entry must lie in alloc/data or in local/ of one of tasks; only directories and regular
// files are made, none replaces what exists, and the files add up to at most maxBytes.
func restoreSnapshot(root *os.Root, r io.Reader, tasks []string, maxBytes int64) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("reading the snapshot: %w", err)
	}
	allowed := map[string]bool{"alloc/data": true}
	for _, t := range tasks {
		allowed[t+"/local"] = true
	}
	chown := os.Geteuid() == 0
	tr := tar.NewReader(gz)
	var total int64
	type dirTime struct {
		name string
		t    time.Time
		mode os.FileMode
	}
	var dirTimes []dirTime
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the snapshot: %w", err)
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || strings.Contains(name, "\\") {
			return fmt.Errorf("snapshot entry %q: not a clean relative path", hdr.Name)
		}
		parts := strings.Split(name, "/")
		if len(parts) < 2 || !allowed[parts[0]+"/"+parts[1]] {
			return fmt.Errorf("snapshot entry %q: outside alloc/data and the tasks' local directories", hdr.Name)
		}
		for _, part := range parts {
			if part == ".." || part == "." {
				return fmt.Errorf("snapshot entry %q: not a clean relative path", hdr.Name)
			}
		}
		mode := os.FileMode(hdr.Mode).Perm()
		switch hdr.Typeflag {
		case tar.TypeDir:
			// Writable until every entry is in; its own mode is set at the end.
			if err := root.MkdirAll(name, 0o755); err != nil {
				return err
			}
			dirTimes = append(dirTimes, dirTime{name, hdr.ModTime, mode})
		case tar.TypeReg:
			if total += hdr.Size; total > maxBytes {
				return fmt.Errorf("snapshot is larger than the ephemeral disk (%d MB)", maxBytes>>20)
			}
			if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
				return err
			}
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
			if err != nil {
				return err
			}
			_, err = io.CopyN(f, tr, hdr.Size)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if err := root.Chmod(name, mode); err != nil {
				return err
			}
			_ = root.Chtimes(name, hdr.ModTime, hdr.ModTime)
		default:
			continue
		}
		if chown {
			if err := root.Lchown(name, hdr.Uid, hdr.Gid); err != nil {
				return err
			}
		}
	}
	for i := len(dirTimes) - 1; i >= 0; i-- {
		if err := root.Chmod(dirTimes[i].name, dirTimes[i].mode); err != nil {
			return err
		}
		_ = root.Chtimes(dirTimes[i].name, dirTimes[i].t, dirTimes[i].t)
	}
	return nil
}

// ephemeralDiskBytes is the size of a group's ephemeral disk, the bound of its migrated data.
func ephemeralDiskBytes(d *api.EphemeralDisk) int64 {
	mb := defaultEphemeralDiskMB
	if d != nil && d.SizeMB != nil && *d.SizeMB > 0 {
		mb = *d.SizeMB
	}
	return int64(mb) << 20
}

// fetchRemoteDisk fills this allocation's directory with the data of the previous allocation,
// which ran on another node, through the servers. It waits (up to migrateWait) while that
// allocation's tasks are still stopping, and gives up at once on anything else: the tasks
// then start with an empty disk, as upstream's do when the previous node is gone. Nothing
// of a migration that failed half-way is kept.
func (r *allocRunner) fetchRemoteDisk(tg *api.TaskGroup, prevID string) {
	maxBytes := ephemeralDiskBytes(tg.EphemeralDisk)
	tmp, err := os.CreateTemp(r.c.config.AllocDir, "."+r.id+".migrate-*")
	if err != nil {
		r.logger.Warn("migrating the previous allocation's disk failed", "previous_alloc", prevID, "error", err)
		return
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	deadline := time.Now().Add(migrateWait)
	var offset int64
	for {
		args := &structs.AllocMigrateDataRequest{AllocID: prevID, NodeID: r.c.node.ID, Offset: offset,
			QueryOptions: structs.QueryOptions{Region: r.c.config.Region, AuthToken: r.c.node.SecretID, AllowStale: true}}
		var reply structs.AllocMigrateDataResponse
		err := r.c.servers.MigrateAllocData(args, &reply)
		if structs.ErrorCode(err) == http.StatusConflict && time.Now().Before(deadline) {
			if r.leavingWithin(time.Second) {
				return
			}
			continue
		}
		if err != nil {
			r.logger.Warn("migrating the previous allocation's disk failed; the tasks start without its data", "previous_alloc", prevID, "error", err)
			return
		}
		// Compressed, incompressible data grows a little: the bound on the files themselves
		// is restoreSnapshot's.
		if offset += int64(len(reply.Data)); offset > maxBytes+maxBytes/64+1<<20 {
			r.logger.Warn("migrating the previous allocation's disk failed; the tasks start without its data", "previous_alloc", prevID,
				"error", fmt.Sprintf("snapshot larger than the ephemeral disk (%d MB)", maxBytes>>20))
			return
		}
		if _, err := tmp.Write(reply.Data); err != nil {
			r.logger.Warn("migrating the previous allocation's disk failed", "previous_alloc", prevID, "error", err)
			return
		}
		if reply.EOF {
			break
		}
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return
	}
	tasks := make([]string, 0, len(tg.Tasks))
	for _, t := range tg.Tasks {
		tasks = append(tasks, t.Name)
	}
	if err := r.unpackMigrated(tmp, tasks, maxBytes); err != nil {
		r.logger.Warn("migrating the previous allocation's disk failed; the tasks start without its data", "previous_alloc", prevID, "error", err)
		return
	}
	r.logger.Info("migrated the previous allocation's disk from its node", "previous_alloc", prevID, "bytes", offset)
}

// unpackMigrated unpacks a snapshot into a staging directory of the allocation, then moves
// its alloc/data and each task's local/ into place: all of it or, on any error, none.
func (r *allocRunner) unpackMigrated(snapshot io.Reader, tasks []string, maxBytes int64) error {
	staging := filepath.Join(r.dir, ".migrating")
	if err := allocdir.MkdirAll(r.c.config.AllocDir, staging, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(staging)
	root, err := os.OpenRoot(staging)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := restoreSnapshot(root, snapshot, tasks, maxBytes); err != nil {
		return err
	}
	moves := [][2]string{{"alloc/data", "alloc/data"}}
	for _, t := range tasks {
		moves = append(moves, [2]string{t + "/local", t + "/local"})
	}
	var moved []string
	for _, m := range moves {
		if _, err := root.Lstat(m[0]); err != nil {
			continue
		}
		to := filepath.Join(r.dir, m[1])
		if err := allocdir.MkdirAll(r.c.config.AllocDir, filepath.Dir(to), 0o755); err == nil {
			err = os.Rename(filepath.Join(staging, m[0]), to)
		}
		if err != nil {
			for _, done := range moved {
				_ = os.RemoveAll(done)
			}
			return err
		}
		moved = append(moved, to)
	}
	return nil
}

// leavingWithin waits d, and reports whether this allocation was stopped or removed meanwhile.
func (r *allocRunner) leavingWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.c.ctx.Done():
		return true
	case <-t.C:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopping || r.destroyed || r.silent
}
