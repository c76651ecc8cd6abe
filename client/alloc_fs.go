package client

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/structs"
)

// The allocation file system API (/v1/client/fs/{ls,stat,cat,readat,stream}) reads inside
// one allocation's directory. What must stay true whatever a task left there:
//   - nothing outside the allocation directory is reached: request paths with ".." that
//     leave it are refused, and every open goes through an os.Root of the directory, so a
//     link pointing outside fails;
//   - a task's secrets directory (<task>/secrets) is never read, listed or stat'ed, also not
//     through a link elsewhere in the allocation: the check is made on the path the kernel
//     reports for the opened descriptor, not on the path asked for;
//   - opening never blocks (a FIFO is opened non-blocking and then refused as not a regular
//     file).
// The caller authorizes (read-fs) first: the client holds no ACLs.

// errSecretsDir refuses a path inside a task's secrets directory, as upstream does.
func errSecretsDir(p string) error {
	return structs.PermissionDenied("%q is in a task's secrets directory, which is never readable through the file system API", p)
}

// AllocFile is a file of an allocation opened for reading. Name is its path relative to the
// allocation directory, for stream frames.
type AllocFile struct {
	*os.File
	Name string
}

// cleanFSPath turns a request path ("/" is the allocation directory, a leading "/" is
// optional) into a clean path relative to it, "." for the directory itself.
func cleanFSPath(p string) (string, error) {
	if strings.ContainsFunc(p, unicode.IsControl) {
		return "", structs.BadRequest("invalid path %q: control characters are not allowed", p)
	}
	if len(p) > 4096 {
		return "", structs.BadRequest("invalid path: longer than 4096 bytes")
	}
	rel := path.Clean("/" + p)
	// Cleaning a rooted path drops a leading "..": look at the raw elements for one that
	// climbs above the start.
	depth := 0
	for _, e := range strings.Split(p, "/") {
		switch e {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return "", structs.BadRequest("invalid path %q: it leaves the allocation directory", p)
			}
		default:
			depth++
		}
	}
	rel = strings.TrimPrefix(rel, "/")
	if rel == "" {
		rel = "."
	}
	return rel, nil
}

// inSecrets reports whether rel (clean, relative to the allocation directory) is a task's
// secrets directory or lies below one: <task>/secrets, for any top-level directory except
// the shared "alloc".
func inSecrets(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	return len(parts) >= 2 && parts[0] != "alloc" && parts[1] == "secrets"
}

// openInAlloc opens rel under the allocation directory of allocID without following a link
// out of it, and checks where the descriptor really is.
func (c *Client) openInAlloc(allocID, reqPath string) (*os.File, string, error) {
	if err := allocdir.CheckElem(allocID); err != nil {
		return nil, "", structs.BadRequest("invalid allocation ID %q", allocID)
	}
	rel, err := cleanFSPath(reqPath)
	if err != nil {
		return nil, "", err
	}
	if inSecrets(rel) {
		return nil, "", errSecretsDir(reqPath)
	}
	dir, err := allocdir.Join(c.config.AllocDir, allocID)
	if err != nil {
		return nil, "", structs.BadRequest("invalid allocation ID %q", allocID)
	}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
			Msg: fmt.Sprintf("allocation %s has no directory on this node", allocID)}
	}
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", fsOpenError(root, rel, reqPath, err)
	}
	real, err := descriptorPath(f, filepath.Join(dir, rel))
	if err != nil {
		f.Close()
		return nil, "", err
	}
	realRel, err := filepath.Rel(dir, real)
	if real == dir {
		realRel, err = ".", nil
	}
	if err != nil || realRel == ".." || strings.HasPrefix(realRel, "../") {
		// os.Root guarantees this cannot happen; refuse rather than trust it blindly.
		f.Close()
		return nil, "", structs.BadRequest("invalid path %q: it leaves the allocation directory", reqPath)
	}
	if inSecrets(realRel) {
		f.Close()
		return nil, "", errSecretsDir(reqPath)
	}
	return f, rel, nil
}

// descriptorPath is where the open f really is. On Linux the kernel says so for the
// descriptor itself (no race with a link swapped after the open); elsewhere the links of
// joined are resolved.
func descriptorPath(f *os.File, joined string) (string, error) {
	if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil && filepath.IsAbs(p) {
		return p, nil
	}
	return filepath.EvalSymlinks(joined)
}

// fsOpenError turns a failed open into the answer for the caller.
func fsOpenError(root *os.Root, rel, reqPath string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		if info, lerr := root.Lstat(rel); lerr == nil && info.Mode()&os.ModeSymlink != 0 {
			// A dangling link, or one os.Root refused to follow (it points outside).
			return structs.BadRequest("invalid path %q: a link that does not lead to a file inside the allocation directory", reqPath)
		}
		return &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
			Msg: fmt.Sprintf("file %q not found in the allocation directory", reqPath)}
	}
	// os.Root refuses a link that leads out with an error it does not export; its text is
	// the only way to tell it from another failure (and nothing worse than a 400 depends on it).
	if strings.Contains(err.Error(), "path escapes from parent") {
		return structs.BadRequest("invalid path %q: a link that leaves the allocation directory", reqPath)
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
			Msg: fmt.Sprintf("file %q not found in the allocation directory: a part of it is not a directory", reqPath)}
	}
	if errors.Is(err, syscall.ELOOP) {
		return structs.BadRequest("invalid path %q: too many links", reqPath)
	}
	if errors.Is(err, os.ErrPermission) {
		return structs.PermissionDenied("the agent may not read %q", reqPath)
	}
	return err
}

// fileInfo is upstream's AllocFileInfo of info.
func fileInfo(info os.FileInfo) *api.AllocFileInfo {
	return &api.AllocFileInfo{
		Name:     info.Name(),
		IsDir:    info.IsDir(),
		Size:     info.Size(),
		FileMode: info.Mode().String(),
		ModTime:  info.ModTime(),
	}
}

// openStatInAlloc opens reqPath of an allocation (openInAlloc) and describes what it opened;
// nothing is left open when either fails.
func (c *Client) openStatInAlloc(allocID, reqPath string) (*os.File, string, os.FileInfo, error) {
	f, rel, err := c.openInAlloc(allocID, reqPath)
	if err != nil {
		return nil, "", nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", nil, err
	}
	return f, rel, info, nil
}

// FSList lists the directory at reqPath of an allocation, sorted by name.
func (c *Client) FSList(allocID, reqPath string) ([]*api.AllocFileInfo, error) {
	f, _, info, err := c.openStatInAlloc(allocID, reqPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !info.IsDir() {
		return nil, structs.BadRequest("path %q is a file, not a directory", reqPath)
	}
	entries, err := f.Readdir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]*api.AllocFileInfo, 0, len(entries))
	for _, e := range entries {
		out = append(out, fileInfo(e))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FSStat describes the file or directory at reqPath of an allocation; for a regular file
// ContentType is sniffed from its first bytes.
func (c *Client) FSStat(allocID, reqPath string) (*api.AllocFileInfo, error) {
	f, rel, info, err := c.openStatInAlloc(allocID, reqPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := fileInfo(info)
	if rel == "." {
		out.Name = "/"
	}
	if info.Mode().IsRegular() {
		head := make([]byte, 512)
		n, _ := io.ReadFull(f, head)
		out.ContentType = http.DetectContentType(head[:n])
	}
	return out, nil
}

// FSOpen opens the regular file at reqPath of an allocation for reading.
func (c *Client) FSOpen(allocID, reqPath string) (*AllocFile, error) {
	f, rel, info, err := c.openStatInAlloc(allocID, reqPath)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		what := "not a regular file"
		if info.IsDir() {
			what = "a directory"
		}
		return nil, structs.BadRequest("path %q is %s: only files can be read", reqPath, what)
	}
	return &AllocFile{File: f, Name: filepath.ToSlash(rel)}, nil
}

// FileStreamReader reads an open allocation file from a position and follows it: a file
// that shrinks was truncated (read again from its start), one whose last link is gone was
// deleted (the stream ends).
type FileStreamReader struct {
	f   *AllocFile
	pos int64
}

// StreamReader reads f from offset bytes after its start, or before its end when fromEnd.
func (f *AllocFile) StreamReader(offset int64, fromEnd bool) (*FileStreamReader, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	at := min(max(offset, 0), info.Size())
	if fromEnd {
		at = info.Size() - at
	}
	return &FileStreamReader{f: f, pos: at}, nil
}

// Next reads the next chunk of at most len(buf) bytes; io.EOF means nothing more for now,
// or, with a FileEventDeleted chunk, ever.
func (r *FileStreamReader) Next(buf []byte) (*Chunk, error) {
	info, err := r.f.Stat()
	if err != nil {
		return nil, err
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink == 0 {
		return &Chunk{File: r.f.Name, Event: FileEventDeleted}, io.EOF
	}
	var event string
	if info.Size() < r.pos {
		r.pos, event = 0, FileEventTruncated
	}
	n, err := r.f.ReadAt(buf, r.pos)
	r.pos += int64(n)
	if n > 0 || event != "" {
		return &Chunk{Data: buf[:n], File: r.f.Name, Offset: r.pos, Event: event}, nil
	}
	if err == nil {
		err = io.EOF
	}
	return nil, err
}
