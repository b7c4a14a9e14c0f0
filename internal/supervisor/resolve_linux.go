//go:build linux && (amd64 || arm64)

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxLinks is how many links a path may go through, as Linux's ELOOP.
const maxLinks = 40

// errNoFile means a path names no file of the file system: a descriptor
// of a memfd, a deleted file, a pipe or socket, or a file that is no
// longer where its name says. Such an execution is refused: no rule can
// know what it runs.
var errNoFile = errors.New("not a file of the file system")

// resolver resolves paths as one thread of the tree sees them: its
// working directory and its descriptors are its own, never the
// supervisor's; its root and mount namespace are the supervisor's (the
// filter refuses chroot and setns into another mount namespace, Landlock
// pivot_root and every mount). A thread may have its own descriptor table and working
// directory (unshare(CLONE_FILES), unshare(CLONE_FS)), and the kernel
// resolves what the path names through the thread's own (a relative
// path, execveat's descriptor, /proc/thread-self) or its process's
// (/proc/self is /proc/<tgid>: the thread group's leader's table and
// directory, and so /dev/fd). A path that names one file for the thread
// and another for its process is refused (errViews): the program would
// see the one, the kernel run the other.
type resolver struct {
	proc string // /proc/<tid>: the thread's own view
	tid  int
	tgid int // the thread's process, read when a path needs it (0 until then)
}

func newResolver(tid int) *resolver {
	return &resolver{proc: "/proc/" + strconv.Itoa(tid), tid: tid}
}

// errViews means a path names one file for the thread that executes it
// and another for its process.
var errViews = errors.New("another file for its thread than for its process")

// process returns the thread's thread group (process) id.
func (r *resolver) process() (int, error) {
	if r.tgid != 0 {
		return r.tgid, nil
	}
	// A thread group's leader is the one thread that is its own group.
	if _, _, errno := syscall.RawSyscall(unix.SYS_TGKILL, uintptr(r.tid), uintptr(r.tid), 0); errno == 0 {
		r.tgid = r.tid
		return r.tid, nil
	}
	fd, err := rawOpen(r.proc + "/status")
	if err != nil {
		return 0, fmt.Errorf("reading its process: %w", err)
	}
	defer rawClose(fd)
	var buf [1024]byte
	n := rawRead(fd, buf[:])
	for line := range strings.SplitSeq(string(buf[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if id, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && id > 0 {
				r.tgid = id
				return id, nil
			}
		}
	}
	return 0, fmt.Errorf("reading its process: no Tgid in %s/status", r.proc)
}

// at returns the absolute path the process means by path relative to its
// working directory (dirfd AT_FDCWD) or to the directory dirfd, spelled
// with the process's /proc entries for resolve to follow.
func (r *resolver) at(dirfd int64, path string) string {
	switch {
	case filepath.IsAbs(path):
		return path
	case dirfd == unix.AT_FDCWD:
		return r.proc + "/cwd/" + path
	}
	return r.proc + "/fd/" + strconv.FormatInt(dirfd, 10) + "/" + path
}

// fd is the path of the process's descriptor n, for resolve.
func (r *resolver) fd(n int64) string { return r.proc + "/fd/" + strconv.FormatInt(n, 10) }

// resolve returns the file path names, every link followed (the last
// one only with follow), as the thread would find it. /proc/self is its
// process's and /proc/thread-self its own (see resolver). A path whose
// reading depends on the thread's or the process's entries (a relative
// path or execveat's descriptor, spelled with r.proc by at and fd;
// /proc/self, /proc/thread-self, /dev/fd) is read three ways when the
// thread is not its process's leader: as the kernel will (its own
// entries, /proc/self the process's), wholly as the thread's, and wholly
// as the process's; unless the three agree, resolve fails with errViews.
// A link of /proc/<pid>/ (a descriptor, cwd, exe, root) is followed to
// the file it holds, by its name: when that file has no name (a memfd, a
// deleted file, a pipe) or its name now holds another, resolve fails
// with errNoFile.
func (r *resolver) resolve(path string, follow bool) (string, error) {
	real, viaProc, err := r.resolveAs(path, follow, "")
	if err != nil && !missing(err) {
		return real, err
	}
	own := path == r.proc || strings.HasPrefix(path, r.proc+"/")
	if !viaProc && !own {
		return real, err
	}
	tgid, perr := r.process()
	if perr != nil {
		return "", perr
	}
	if tgid == r.tid {
		return real, err
	}
	proc := "/proc/" + strconv.Itoa(tgid)
	thread, _, terr := r.resolveAs(path, follow, r.proc)
	process := path
	if own {
		process = proc + strings.TrimPrefix(path, r.proc)
	}
	process, _, perr = r.resolveAs(process, follow, proc)
	for _, v := range []struct {
		p string
		e error
	}{{thread, terr}, {process, perr}} {
		if v.p != real || missing(v.e) != missing(err) || v.e != nil && !missing(v.e) {
			return "", fmt.Errorf("%s: %w", path, errViews)
		}
	}
	return real, err
}

// resolveAs is resolve with /proc/self standing for self ("": the
// thread's process, as the kernel reads it) and /proc/thread-self for
// self too when given (else the thread's own); it reports whether the
// path went through either.
func (r *resolver) resolveAs(path string, follow bool, self string) (string, bool, error) {
	if !filepath.IsAbs(path) {
		return "", false, fmt.Errorf("resolving %q: not absolute", path)
	}
	resolved, rest := "/", path
	links := 0
	viaSelf := false
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
		switch next {
		case "/proc/thread-self":
			viaSelf = true
			next = r.proc
			if self != "" {
				next = self
			}
		case "/proc/self":
			viaSelf = true
			if self == "" {
				tgid, err := r.process()
				if err != nil {
					return "", viaSelf, err
				}
				self = "/proc/" + strconv.Itoa(tgid)
			}
			next = self
		}
		if rest == "" && !follow {
			return next, viaSelf, nil
		}
		var st unix.Stat_t
		if err := rawStat(next, &st, false); err != nil {
			return "", viaSelf, &os.PathError{Op: "lstat", Path: next, Err: err}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", viaSelf, &os.PathError{Op: "resolve", Path: path, Err: unix.ELOOP}
		}
		target, err := readlink(next)
		if err != nil {
			return "", viaSelf, err
		}
		if procLink(next) {
			if err := sameFile(next, target); err != nil {
				return "", viaSelf, err
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
	return resolved, viaSelf, nil
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

// probe is what identifying a program reads of its file: its path with
// every link resolved, its status and its #! line; or the error finding
// it (missing, for a file that does not exist).
type probe struct {
	real   string
	st     unix.Stat_t
	interp []string
	err    error
}

// probe finds the file named (an absolute path, a thread's entries
// spelled with r.proc) as the kernel will for the thread, and reads it.
func (r *resolver) probe(named string) probe {
	if pr, ok := probeOpen(named); ok {
		return pr
	}
	real, err := r.resolve(named, true)
	if err != nil {
		return probe{err: err}
	}
	pr := probe{real: real}
	pr.interp, pr.err = interpreterStat(real, &pr.st)
	return pr
}

// probeOpen is probe by one openat2, which resolves the path in the
// kernel, when that reading is the tree's: an absolute path that neither
// goes through /proc nor crosses a mount (RESOLVE_NO_XDEV: the tree's root
// and mounts are the supervisor's; /proc is one) nor follows a magic
// link. ok is false where probe must walk the path itself: below /proc,
// across a mount, a file that cannot be opened, a kernel without
// openat2.
func probeOpen(named string) (probe, bool) {
	if !filepath.IsAbs(named) || named == "/proc" || strings.HasPrefix(named, "/proc/") {
		return probe{}, false
	}
	fd, err := rawOpenat2(named, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY,
		unix.RESOLVE_NO_XDEV|unix.RESOLVE_NO_MAGICLINKS)
	switch {
	case missing(err):
		return probe{err: &os.PathError{Op: "open", Path: named, Err: err}}, true
	case err != nil:
		return probe{}, false
	}
	defer rawClose(fd)
	var buf [unix.PathMax + 1]byte
	real, err := rawReadlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || !filepath.IsAbs(real) || strings.HasSuffix(real, " (deleted)") {
		return probe{}, false
	}
	pr := probe{real: real}
	pr.interp, pr.err = interpreterFd(fd, &pr.st)
	return pr, true
}
