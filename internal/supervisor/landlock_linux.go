//go:build linux && (amd64 || arm64)

package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock, by raw system calls: the supervisor makes the ruleset, and
// the program's process restricts itself with it before its execve, and
// nothing else (go-landlock restricts every thread of the process, which
// the supervisor must not be).

// The write rights the domain handles, by ABI version. Executions are
// not confined, nor reads but of the secrets (see allowReadsBut).
const (
	writeRightsV1 = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	// fileRights are the rights that apply to a file, not a directory.
	fileRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | readRight
	// readRight is the one read right the domain handles, when the tree
	// may not read some files (Config.Secrets): reading a file's content
	// (executing one too, which reads it). Listing a directory is not
	// handled: the tree may see the names of the secrets, not their
	// content.
	readRight = unix.LANDLOCK_ACCESS_FS_READ_FILE
	// devRights make (or link or rename) a device node: handled always,
	// allowed nowhere. A node the tree made inside the checkout would
	// reach a disk or a device outside any confinement.
	devRights = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK
)

// landlockABI returns the kernel's Landlock ABI version, 0 when it has none
// (or it is disabled).
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// writeRights returns the write rights ABI version abi knows.
func writeRights(abi int) uint64 {
	r := uint64(writeRightsV1)
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	return r
}

// rulesetAttr is struct landlock_ruleset_attr up to handled_access_fs, the
// part every ABI version reads.
type rulesetAttr struct {
	handledFS uint64
}

// pathBeneathAttr is struct landlock_path_beneath_attr (packed: 12 bytes).
type pathBeneathAttr struct {
	allowed  uint64
	parentFd int32
}

// newRuleset makes the Landlock ruleset that confines writes to writable
// (resolved: no link on the way), for the program's process to restrict
// itself with (landlock_restrict_self, in spawnChild). With confine false
// it only handles making device nodes, so that the tree still cannot
// ptrace processes outside its domain (the supervisor among them) nor
// mount anything, and REFER, allowed everywhere. Writable directories get
// every right but making device nodes, REFER too (ABI 2 and later): files
// move between them and within them. On ABI 1, Landlock refuses every
// rename across directories (EXDEV), and nothing can allow it. The
// descriptor is close-on-exec. With secrets it handles reading files too,
// and allows it everywhere but beneath them (allowReadsBut); writable
// directories do not lend it (a secret may lie below one).
func newRuleset(confine bool, writable, secrets []string) (int, error) {
	abi := landlockABI()
	if abi < 1 {
		return -1, fmt.Errorf("landlock is not available")
	}
	handled := writeRights(abi)
	if !confine {
		// A domain that does not handle REFER refuses every rename and
		// link across directories (EXDEV); handled and allowed beneath
		// the root, they work as without Landlock.
		handled = devRights
		if abi >= 2 {
			handled |= unix.LANDLOCK_ACCESS_FS_REFER
		}
	}
	if len(secrets) > 0 {
		handled |= readRight
	}
	attr := rulesetAttr{handledFS: handled}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return -1, fmt.Errorf("creating the landlock ruleset: %w", errno)
	}
	if !confine && abi >= 2 {
		if err := allowBeneath(int(fd), "/", unix.LANDLOCK_ACCESS_FS_REFER); err != nil {
			unix.Close(int(fd))
			return -1, err
		}
	}
	if confine {
		seen := map[string]bool{}
		for _, p := range writable {
			if seen[p] { // a rule again adds nothing (TMPDIR is often /tmp)
				continue
			}
			seen[p] = true
			if err := allowBeneath(int(fd), p, handled&^devRights&^readRight); err != nil {
				unix.Close(int(fd))
				return -1, err
			}
		}
	}
	if len(secrets) > 0 {
		if err := allowReadsBut(int(fd), secrets); err != nil {
			unix.Close(int(fd))
			return -1, err
		}
	}
	return int(fd), nil
}

// allowReadsBut allows reading files everywhere but beneath the secrets
// (absolute paths; each is taken as named and with its links resolved).
// Landlock only allows, so the rules cover the complement: every entry of
// a directory that leads to a secret is allowed, with all below it, but
// the secret and the entries that lead to one, which are walked the same
// way. An entry that is a link is not allowed itself: reading through it
// is decided where it leads. So what appears later in a directory that
// leads to a secret (the home directory, ~/.config) cannot be read by the
// tree until its next line, nor can a new file in such a directory the
// tree may write; everywhere else is as before.
func allowReadsBut(ruleset int, secrets []string) error {
	deny := map[string]bool{}
	lead := map[string]bool{} // directories that lead to a secret
	add := func(p string) {
		p = filepath.Clean(p)
		if !filepath.IsAbs(p) || deny[p] {
			return
		}
		deny[p] = true
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			lead[d] = true
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	for _, s := range secrets {
		add(s)
		if r, err := filepath.EvalSymlinks(s); err == nil {
			add(r)
		} else if r, err := filepath.EvalSymlinks(filepath.Dir(s)); err == nil {
			add(filepath.Join(r, filepath.Base(s))) // not there yet: where it would be
		}
	}
	if deny["/"] {
		return nil // nothing may be read
	}
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil // gone, or unreadable: nothing to allow below
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case deny[p], e.Type()&fs.ModeSymlink != 0:
			case lead[p]:
				if e.IsDir() {
					if err := walk(p); err != nil {
						return err
					}
				}
			default:
				if err := allowBeneath(ruleset, p, readRight); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk("/")
}

// allowBeneath allows rights beneath path (a directory), or on it (a
// file). A path that does not exist, or that a link now leads through
// (it was resolved: a link made since is not the person's grant), is
// skipped.
func allowBeneath(ruleset int, path string, rights uint64) error {
	pfd, err := rawOpenat2(path, unix.O_PATH|unix.O_CLOEXEC, unix.RESOLVE_NO_SYMLINKS)
	if errors.Is(err, unix.ENOSYS) {
		pfd, err = unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	}
	if err != nil {
		return nil // nothing there to write to
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fileRights
	}
	attr := pathBeneathAttr{allowed: rights, parentFd: int32(pfd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("allowing access beneath %s: %w", path, errno)
	}
	return nil
}
