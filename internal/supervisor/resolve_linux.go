//go:build linux && (amd64 || arm64)

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks is how many links a path may go through, as Linux's ELOOP.
const maxLinks = 40

// errNoFile means a path names no file of the file system: a descriptor
// of a memfd, a deleted file, a pipe or socket, or a file that is no
// longer where its name says. Such an execution is refused: no rule can
// know what it runs.
var errNoFile = errors.New("not a file of the file system")

// resolver resolves paths as one process of the tree sees them: its
// working directory, its descriptors and its /proc/self are its own,
// never the supervisor's. tid is the thread that made the call.
type resolver struct {
	proc string // /proc/<tid>
}

func newResolver(tid int) resolver { return resolver{proc: "/proc/" + strconv.Itoa(tid)} }

// checkRoot fails when the process has a root other than the
// supervisor's (chroot): paths would name other files than the ones the
// supervisor sees.
func (r resolver) checkRoot() error {
	var buf [unix.PathMax + 1]byte
	root, err := rawReadlink(r.proc+"/root", buf[:])
	if err != nil {
		return fmt.Errorf("reading its root directory: %w", err)
	}
	if root != "/" {
		return fmt.Errorf("it runs in a changed root (%s)", root)
	}
	return nil
}

// at returns the absolute path the process means by path relative to its
// working directory (dirfd AT_FDCWD) or to the directory dirfd, spelled
// with the process's /proc entries for resolve to follow.
func (r resolver) at(dirfd int64, path string) string {
	switch {
	case filepath.IsAbs(path):
		return path
	case dirfd == unix.AT_FDCWD:
		return r.proc + "/cwd/" + path
	}
	return r.proc + "/fd/" + strconv.FormatInt(dirfd, 10) + "/" + path
}

// fd is the path of the process's descriptor n, for resolve.
func (r resolver) fd(n int64) string { return r.proc + "/fd/" + strconv.FormatInt(n, 10) }

// resolve returns the file path names, every link followed (the last
// one only with follow), as the process would find it. /proc/self and
// /proc/thread-self are the process's. A link of /proc/<pid>/ (a
// descriptor, cwd, exe, root) is followed to the file it holds, by its
// name: when that file has no name (a memfd, a deleted file, a pipe) or
// its name now holds another file, resolve fails with errNoFile.
func (r resolver) resolve(path string, follow bool) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("resolving %q: not absolute", path)
	}
	resolved, rest := "/", path
	links := 0
	for rest != "" {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		if next == "/proc/self" || next == "/proc/thread-self" {
			next = r.proc
		}
		if rest == "" && !follow {
			return next, nil
		}
		var st unix.Stat_t
		if err := rawStat(next, &st, false); err != nil {
			return "", &os.PathError{Op: "lstat", Path: next, Err: err}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", &os.PathError{Op: "resolve", Path: path, Err: unix.ELOOP}
		}
		target, err := readlink(next)
		if err != nil {
			return "", err
		}
		if procLink(next) {
			if err := sameFile(next, target); err != nil {
				return "", err
			}
			resolved = target
			continue
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		if rest == "" {
			rest = target
		} else {
			rest = target + "/" + rest
		}
	}
	return resolved, nil
}

// procLink reports whether p is below /proc/<pid>/, where links are the
// kernel's: followed to the object, not by name.
func procLink(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	pid, _, ok := strings.Cut(rest, "/")
	if !ok || pid == "" {
		return false
	}
	for _, c := range pid {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// sameFile checks that the /proc link link holds the file its name target
// names now.
func sameFile(link, target string) error {
	if !filepath.IsAbs(target) || strings.HasSuffix(target, " (deleted)") {
		return fmt.Errorf("%s is %q: %w", link, target, errNoFile)
	}
	var a, b unix.Stat_t
	if err := rawStat(link, &a, true); err != nil {
		return &os.PathError{Op: "stat", Path: link, Err: err}
	}
	if err := rawStat(target, &b, true); err != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		return fmt.Errorf("%s holds a file no longer at %s: %w", link, target, errNoFile)
	}
	return nil
}

// missing reports whether err says a path does not exist: the system call
// would fail anyway.
func missing(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
}
