//go:build linux && (amd64 || arm64)

package supervisor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// writable reports whether p (resolved) lies in the directories the tree
// may write, or is one of its writable files.
func (l *loop) writable(p string) bool {
	for _, w := range l.writes {
		if p == w || strings.HasPrefix(p, w+"/") || w == "/" {
			return true
		}
	}
	return false
}

// metaCallOf returns the metadata call numbered nr.
func metaCallOf(nr uint32) (metaCall, bool) {
	for _, m := range metaCalls {
		if m.nr == nr {
			return m, true
		}
	}
	return metaCall{}, false
}

// answerMeta decides a metadata call (chmod, chown, utimes, xattrs): it
// goes on when its target lies in the writable directories, and fails
// with EPERM elsewhere; a target that does not exist fails with ENOENT.
// The target is resolved as the process sees it; the process may swap a
// link between this check and the call (see the package doc).
func (l *loop) answerMeta(n *seccompNotif) (unix.Errno, bool) {
	mc, ok := metaCallOf(uint32(n.data.nr))
	if !ok {
		l.report("agent-shim: denied at run time: system call %d by pid %d: unexpected", n.data.nr, n.pid)
		return unix.EPERM, false
	}
	target, err := l.metaTarget(n, mc)
	switch {
	case errors.Is(err, errGone):
		return 0, true
	case errors.Is(err, errAnon):
		return 0, false
	case missing(err):
		return unix.ENOENT, false
	case err != nil:
		l.refuse(Refusal{Kind: "metadata", Call: mc.name, Reason: err.Error()}, "agent-shim: denied at run time: %s by pid %d: %v", mc.name, n.pid, err)
		return unix.EPERM, false
	case !l.writable(target):
		l.refuse(Refusal{Kind: "metadata", Call: mc.name, Path: target, Reason: "outside the directories the tree may write", Scope: true},
			"agent-shim: denied at run time: %s %s: outside the directories the tree may write", mc.name, target)
		return unix.EPERM, false
	}
	if !l.valid(n.id) {
		return 0, true
	}
	return 0, false
}

// answerIoctl decides an ioctl that changes a file's flags or attributes
// (fsIoctlTypes): it goes on when the file lies in the writable
// directories (or is no file of the file system), and fails with EPERM
// elsewhere.
func (l *loop) answerIoctl(n *seccompNotif) (unix.Errno, bool) {
	mc := metaCall{name: "ioctl", fd: true}
	req := uint32(n.data.args[1])
	target, err := l.metaTarget(n, mc)
	switch {
	case errors.Is(err, errGone):
		return 0, true
	case errors.Is(err, errAnon):
		return 0, false
	case err != nil:
		l.refuse(Refusal{Kind: "metadata", Call: "ioctl", Reason: err.Error()}, "agent-shim: denied at run time: ioctl %#x by pid %d: %v", req, n.pid, err)
		return unix.EPERM, false
	case !l.writable(target):
		l.refuse(Refusal{Kind: "metadata", Call: "ioctl", Path: target, Reason: "outside the directories the tree may write", Scope: true},
			"agent-shim: denied at run time: ioctl %#x on %s (its flags or attributes): outside the directories the tree may write", req, target)
		return unix.EPERM, false
	}
	if !l.valid(n.id) {
		return 0, true
	}
	return 0, false
}

// errAnon means a metadata call's target is a descriptor of no file of
// the file system (a pipe, a socket, a memfd, a deleted file with no
// other link): changing it changes nothing anyone else sees.
var errAnon = errors.New("an anonymous file")

// metaTarget resolves the file a metadata call changes.
func (l *loop) metaTarget(n *seccompNotif, mc metaCall) (string, error) {
	r := newResolver(int(n.pid))
	a := n.data.args
	var named string
	isFd := true
	follow := !mc.nofollow
	if mc.flags > 0 && a[mc.flags]&unix.AT_SYMLINK_NOFOLLOW != 0 {
		follow = false
	}
	switch {
	case mc.fd:
		named = r.fd(int64(int32(a[0])))
	case mc.nullIsFd && a[mc.path] == 0:
		named = r.fd(int64(int32(a[mc.dirfd])))
	default:
		m, done, err := l.openMem(n)
		if err != nil {
			return "", err
		}
		path, err := m.string(a[mc.path])
		done()
		if err != nil {
			return "", fmt.Errorf("reading its path: %w", err)
		}
		dirfd := int64(unix.AT_FDCWD)
		if mc.dirfd >= 0 {
			dirfd = int64(int32(a[mc.dirfd]))
		}
		switch {
		case path == "" && mc.flags > 0 && a[mc.flags]&unix.AT_EMPTY_PATH != 0:
			named, follow = r.fd(dirfd), true
		case path == "":
			return "", unix.ENOENT
		default:
			named, isFd = r.at(dirfd, path), false
		}
	}
	if !isFd {
		return r.resolve(named, follow)
	}
	// A descriptor: a pipe or socket, a memfd, or a deleted file whose
	// last link is gone change nothing outside the tree.
	t, err := os.Readlink(named)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(t) || strings.HasSuffix(t, " (deleted)") {
		var st unix.Stat_t
		if err := unix.Stat(named, &st); err != nil {
			return "", err
		}
		if st.Nlink == 0 || st.Mode&unix.S_IFMT == unix.S_IFIFO || st.Mode&unix.S_IFMT == unix.S_IFSOCK || !filepath.IsAbs(t) {
			return "", errAnon
		}
		return "", fmt.Errorf("%s is %q, still linked elsewhere: %w", named, t, errNoFile)
	}
	return r.resolve(named, follow)
}

// controlSockets are the sockets through which a server outside the tree
// runs what it is told, as the person: by where they lie (resolved), the
// programs whose own use of them is the policy's decision (their
// execution was decided).
var controlSockets = []struct {
	what  string
	match func(p string) bool
	progs []string
}{
	{"a tmux server", func(p string) bool {
		d := filepath.Base(filepath.Dir(p))
		return strings.HasPrefix(d, "tmux-") && digits(d[5:])
	}, []string{"tmux"}},
	{"a screen session", func(p string) bool {
		return strings.Contains(p, "/screen/S-") || strings.Contains(p, "/.screen/")
	}, []string{"screen"}},
	{"systemd", func(p string) bool {
		if strings.HasPrefix(p, "/run/systemd/") {
			return true
		}
		uid, rest, ok := strings.Cut(strings.TrimPrefix(p, "/run/user/"), "/")
		return ok && strings.HasPrefix(p, "/run/user/") && digits(uid) && (strings.HasPrefix(rest, "systemd/") || rest == "bus")
	}, []string{"systemctl", "systemd-run", "busctl", "loginctl", "journalctl"}},
	{"the Docker daemon", func(p string) bool {
		b := filepath.Base(p)
		return b == "docker.sock" || b == "containerd.sock"
	}, []string{"docker", "ctr", "nerdctl"}},
	{"the Podman service", func(p string) bool { return filepath.Base(p) == "podman.sock" }, []string{"podman"}},
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// answerConnect decides a connect: a Unix socket of a server outside the
// tree that runs what it is told (controlSockets) is refused with EPERM,
// unless the caller is the program the socket belongs to (found on the
// tree's PATH), whose execution was decided. Everything else goes on.
func (l *loop) answerConnect(n *seccompNotif) (unix.Errno, bool) {
	a := n.data.args
	size := int(min(a[2], 110))
	if size <= 2 || a[1] == 0 {
		return 0, false // the kernel refuses it
	}
	m, done, err := l.openMem(n)
	if errors.Is(err, errGone) {
		return 0, true
	}
	if err != nil {
		l.refuse(Refusal{Kind: "connect", Reason: fmt.Sprintf("a connection that cannot be read: %v", err)}, "agent-shim: denied at run time: a connection by pid %d that cannot be read: %v", n.pid, err)
		return unix.EPERM, false
	}
	b, err := m.bytes(a[1], size)
	done()
	if err != nil {
		return unix.EFAULT, false
	}
	if binary.LittleEndian.Uint16(b) != unix.AF_UNIX || b[2] == 0 {
		return 0, false // not a Unix socket, or an abstract one
	}
	name := string(b[2:])
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	r := newResolver(int(n.pid))
	p, err := r.resolve(r.at(unix.AT_FDCWD, name), true)
	if missing(err) {
		// Failed here, not let go on: what the kernel would find when it
		// goes on may be a link to a control socket made meanwhile.
		if errors.Is(err, unix.ENOTDIR) {
			return unix.ENOTDIR, false
		}
		return unix.ENOENT, false
	}
	if err != nil {
		l.refuse(Refusal{Kind: "connect", Path: name, Reason: err.Error()}, "agent-shim: denied at run time: a connection to %s by pid %d: %v", name, n.pid, err)
		return unix.EPERM, false
	}
	for _, cs := range controlSockets {
		if !cs.match(p) && !l.envSocket(cs.what, p) {
			continue
		}
		if l.isProgram(r, cs.progs) {
			break
		}
		exe, _ := os.Readlink(r.proc + "/exe")
		l.refuse(Refusal{Kind: "connect", Path: p, Reason: cs.what + ", which runs what it is told outside the supervisor"},
			"agent-shim: denied at run time: %s (pid %d) connecting to %s (%s): it runs what it is told outside the supervisor", exe, n.pid, p, cs.what)
		return unix.EPERM, false
	}
	if !l.valid(n.id) {
		return 0, true
	}
	return 0, false
}

// envSockets are the variables that name a control socket elsewhere than
// where controlSockets look, by the server they belong to, and how to
// read the path from their value.
var envSockets = []struct {
	name, what string
	path       func(v string) string
}{
	{"TMUX", "a tmux server", func(v string) string { p, _, _ := strings.Cut(v, ","); return p }},
	{"DOCKER_HOST", "the Docker daemon", func(v string) string { p, _ := strings.CutPrefix(v, "unix://"); return p }},
	{"CONTAINER_HOST", "the Podman service", func(v string) string { p, _ := strings.CutPrefix(v, "unix://"); return p }},
	{"DBUS_SESSION_BUS_ADDRESS", "systemd", func(v string) string {
		for _, part := range strings.Split(v, ",") {
			for _, kv := range strings.Split(part, ";") {
				if p, ok := strings.CutPrefix(kv, "unix:path="); ok {
					return p
				}
			}
		}
		return ""
	}},
}

// envSocket reports whether p is the socket of the server what that the
// tree's first environment names (TMUX, DOCKER_HOST, …).
func (l *loop) envSocket(what, p string) bool {
	for _, es := range envSockets {
		if es.what != what {
			continue
		}
		for _, kv := range l.cfg.Env {
			v, ok := strings.CutPrefix(kv, es.name+"=")
			if !ok {
				continue
			}
			if s := es.path(v); s != "" && filepath.IsAbs(s) {
				if r, err := filepath.EvalSymlinks(s); err == nil && r == p || s == p {
					return true
				}
			}
		}
	}
	return false
}

// progPaths are the programs found on the tree's PATH, by name.
var progPaths sync.Map

// isProgram reports whether the process runs one of progs as found on
// the tree's PATH (the same file).
func (l *loop) isProgram(r *resolver, progs []string) bool {
	var self unix.Stat_t
	if unix.Stat(r.proc+"/exe", &self) != nil {
		return false
	}
	path := ""
	for _, kv := range l.cfg.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
			break // the first, as getenv reads it
		}
	}
	for _, prog := range progs {
		key := path + "\x00" + prog
		p, ok := progPaths.Load(key)
		if !ok {
			found := ""
			for _, dir := range filepath.SplitList(path) {
				if !filepath.IsAbs(dir) {
					continue
				}
				if c := filepath.Join(dir, prog); func() bool { _, err := exec.LookPath(c); return err == nil }() {
					found = c
					break
				}
			}
			p, _ = progPaths.LoadOrStore(key, found)
		}
		var st unix.Stat_t
		if p.(string) != "" && unix.Stat(p.(string), &st) == nil && st.Dev == self.Dev && st.Ino == self.Ino {
			return true
		}
	}
	return false
}
