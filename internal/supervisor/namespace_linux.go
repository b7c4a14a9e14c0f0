//go:build linux && (amd64 || arm64)

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Prevention. With Config.Protect the program's process is cloned into a
// mount namespace of its own (and, without CAP_SYS_ADMIN, a user
// namespace that maps only this process's uid and gid, as they are
// outside), where the protected paths the snapshot found are bound onto
// themselves read-only, and every directory on the way to them below a
// checkout (.git, .git/modules/x, a nested repository, .claude, vendor/x)
// onto itself: a mount point cannot be renamed, removed or replaced, so
// the tree can neither write a protected file nor swap the directory
// that holds it. The binds are made before the process restricts
// itself; its capabilities go with the rest (the user namespace's too),
// and in its Landlock domain nothing of the tree may mount, unmount or
// move a mount, in that namespace or a new one. Every mount is made a
// slave first: nothing made there reaches the person's namespace, and
// the person's later mounts still reach the tree's.
//
// A protected path missing at the snapshot (a hooks directory, or
// .git/commondir, which git reads if it appears) cannot be bound: the
// tree may create it, and the undo removes it. A path that holds another
// file at the start than at the snapshot is not bound either, and left to
// the undo. Where the kernel refuses the namespaces (unprivileged user
// namespaces turned off, as Ubuntu and some containers do), Run goes on
// without them (Status.Prevented false) and the undo alone holds.

// namespaces is whether Run tries a mount namespace; tests turn it off
// to hold the undo alone.
var namespaces = true

// errNoNamespace is the kernel's refusal of the mount namespace.
var errNoNamespace = errors.New("no mount namespace")

// nsPlan is the mount namespace the program's process makes.
type nsPlan struct {
	flags    uintptr
	userns   bool
	uid, gid int
	binds    []bind
}

type bind struct {
	path      string
	id        FileID
	ro        bool
	mask, dir bool // a secret (see bindArg)
}

// nsPlanOf is the namespace that keeps the tree from changing s's
// protected paths, but those below or above a path of keep (what a
// person approved the line to write); nil when there is nothing to bind
// or too much.
func nsPlanOf(s *Snapshot, keep, secrets []string) *nsPlan {
	kept := func(p string) bool {
		return slices.ContainsFunc(keep, func(k string) bool {
			k = filepath.Clean(k)
			return k == p || strings.HasPrefix(k, p+"/") || strings.HasPrefix(p, k+"/")
		})
	}
	var binds []bind
	if s == nil {
		s = &Snapshot{}
	}
	for _, d := range s.dirs {
		if d.parent != nil && (s.isWatched(d.path) || slices.Contains(s.watched, d.path)) {
			binds = append(binds, bind{path: d.path, id: d.id})
		}
	}
	for _, e := range s.entries {
		was, ok := e.was[""]
		if !ok || len(e.rest) != 1 || kept(e.path) || !(was.mode.IsRegular() || was.mode.IsDir() && e.tree) {
			continue
		}
		binds = append(binds, bind{path: e.path, id: FileID{was.stat.dev, was.stat.ino}, ro: true})
	}
	// The secrets there now, as resolved: masked. One missing now that
	// appears during the line is not (Landlock would keep it: see
	// allowReadsBut; the namespace keeps what is there at the start).
	for _, p := range secrets {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(r, &st) != nil {
			continue
		}
		dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		if !dir && st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		binds = append(binds, bind{path: r, id: FileID{uint64(st.Dev), st.Ino}, mask: true, dir: dir})
	}
	if len(binds) == 0 || len(binds) > maxBinds {
		return nil
	}
	// Parents before what lies below them: a bind below a directory
	// bound onto itself is made in the new mount.
	sort.Slice(binds, func(i, j int) bool { return binds[i].path < binds[j].path })
	p := &nsPlan{flags: unix.CLONE_NEWNS, binds: binds}
	if !hasCapability(unix.CAP_SYS_ADMIN) {
		p.flags |= unix.CLONE_NEWUSER
		p.userns, p.uid, p.gid = true, os.Getuid(), os.Getgid()
	}
	return p
}

// setNamespace puts p into a, returning what a points to, to be kept
// until the child has left this process's memory.
func setNamespace(a *spawnArgs, p *nsPlan) ([]any, error) {
	if p == nil {
		return nil, nil
	}
	a.cloneFlags, a.userns = p.flags, p.userns
	copy(a.setgroups[:], "/proc/self/setgroups\x00")
	copy(a.uidMapPath[:], "/proc/self/uid_map\x00")
	copy(a.gidMapPath[:], "/proc/self/gid_map\x00")
	copy(a.deny[:], "deny")
	a.uidMapLen = int32(copy(a.uidMap[:], fmt.Sprintf("%d %d 1\n", p.uid, p.uid)))
	a.gidMapLen = int32(copy(a.gidMap[:], fmt.Sprintf("%d %d 1\n", p.gid, p.gid)))
	copy(a.root[:], "/\x00")
	a.how = unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: unix.RESOLVE_NO_SYMLINKS}
	a.attr = unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	copy(a.tmpfs[:], "tmpfs\x00")
	copy(a.tmpfsOpts[:], "mode=0,nr_blocks=1,nr_inodes=1\x00")
	copy(a.devNull[:], "/dev/null\x00")
	copy(a.fdPath[:], "/proc/self/fd/")
	var keep []any
	for i, b := range p.binds {
		path, err := syscall.BytePtrFromString(b.path)
		if err != nil {
			return nil, err
		}
		keep = append(keep, path)
		a.binds[i] = bindArg{path: uintptr(unsafe.Pointer(path)), id: b.id, ro: b.ro, mask: b.mask, dir: b.dir}
	}
	a.nbinds = int32(len(p.binds))
	return keep, nil
}

// noNamespace reports whether err is the kernel's refusal of the
// namespaces: the start is tried again without them.
func noNamespace(err error) bool {
	return errors.Is(err, errNoNamespace)
}

// mountsOf reads the mount points of the process pid's namespace and
// whether each is read-only; nil when it cannot.
func mountsOf(pid int) map[string]bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		// id parent major:minor root mountpoint options ...
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		ro := slices.Contains(strings.Split(f[5], ","), "ro")
		out[unescapeMount(f[4])] = ro
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
