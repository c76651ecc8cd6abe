package allocdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// ErrEscapes is wrapped by every refusal, so callers can tell a refused name from an I/O error.
var ErrEscapes = errors.New("path would leave its directory")

// CheckElem reports why name cannot be one element of a path under an allocation directory.
func CheckElem(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", ErrEscapes)
	case name == "." || name == "..":
		return fmt.Errorf("%w: name %q", ErrEscapes, name)
	case strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/'):
		return fmt.Errorf("%w: name %q contains a path separator", ErrEscapes, name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("%w: name %q contains a control character", ErrEscapes, name)
	}
	return nil
}

// Join joins elems under root. Each element must pass CheckElem, and the result must stay
// strictly under root (it cannot be root itself).
func Join(root string, elems ...string) (string, error) {
	if len(elems) == 0 {
		return "", fmt.Errorf("%w: no path under %s", ErrEscapes, root)
	}
	for _, e := range elems {
		if err := CheckElem(e); err != nil {
			return "", err
		}
	}
	p := filepath.Join(append([]string{root}, elems...)...)
	if _, err := Rel(root, p); err != nil {
		return "", err
	}
	return p, nil
}

// Rel is path relative to root, refused unless path lies strictly under root.
func Rel(root, path string) (string, error) {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%w: %s is not under %s", ErrEscapes, path, root)
	}
	return rel, nil
}

// MkdirAll creates path, which must lie under root, and its parents below root. Links on the
// way are followed only while they stay under root.
func MkdirAll(root, path string, perm os.FileMode) error {
	rel, err := Rel(root, path)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.MkdirAll(rel, perm)
}

// OpenFile opens path, which must lie under root, as os.OpenFile would, refusing links that
// lead outside root.
func OpenFile(root, path string, flag int, perm os.FileMode) (*os.File, error) {
	rel, err := Rel(root, path)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenFile(rel, flag, perm)
}

// Overlaps says whether a and b are the same directory or one lies inside the other, after
// following the links of whichever exist: a host path shared with tasks must do neither with
// the agent's data directory, whose client state and allocation secrets (workload identity
// tokens among them) would then be readable by tasks of other allocations.
func Overlaps(a, b string) bool {
	a, b = realPath(a), realPath(b)
	return a == b || within(a, b) || within(b, a)
}

func within(dir, p string) bool {
	_, err := Rel(dir, p)
	return err == nil
}

// realPath is path made absolute and clean, with its links followed when it exists.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
