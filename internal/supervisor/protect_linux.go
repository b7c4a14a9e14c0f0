//go:build linux

package supervisor

import (
	"io/fs"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// statKeyOfStat returns st's statKey.
func statKeyOfStat(st *unix.Stat_t) statKey {
	return statKey{dev: uint64(st.Dev), ino: st.Ino,
		mtime: time.Unix(st.Mtim.Unix()), ctime: time.Unix(st.Ctim.Unix())}
}

// renameNoReplace renames, failing with EEXIST where the new name is
// taken.
func renameNoReplace(olddir int, oldname string, newdir int, newname string) error {
	return unix.Renameat2(olddir, oldname, newdir, newname, unix.RENAME_NOREPLACE)
}

// readFile reads the regular file p of the size Lstat gave: a raw open,
// not followed if it became a link, not waiting if it became a FIFO,
// without the runtime poller's registration that os.ReadFile makes.
func readFile(p string, size int64) ([]byte, error) {
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: p, Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) == size && len(buf) < cap(buf) {
			// All Lstat said, and short of what was asked: the end. A
			// file that grew since reads on.
			return buf, nil
		}
	}
}

// clockSettable reports whether this process, and so the tree it starts,
// may set the system clock (CAP_SYS_TIME permitted), or cannot tell.
var clockSettable = func() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return true
	}
	return data[unix.CAP_SYS_TIME/32].Permitted&(1<<(unix.CAP_SYS_TIME%32)) != 0
}

// confined runs f on a thread of its own that may write only below the
// directories open as roots (Landlock; no_new_privs on that thread), and
// ends the thread after it. Where Landlock is missing, f runs as it is.
func confined(roots []int, f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if ruleset := undoRuleset(roots); ruleset >= 0 {
			if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e == 0 {
				unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0)
			}
			unix.Close(ruleset)
		}
		f()
	}()
	<-done
}

// undoRuleset is a Landlock ruleset that allows writing below roots
// only; -1 without Landlock.
func undoRuleset(roots []int) int {
	abi := landlockABI()
	if abi < 1 {
		return -1
	}
	handled := writeRights(abi)
	attr := rulesetAttr{handledFS: handled}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return -1
	}
	for _, r := range roots {
		rule := pathBeneathAttr{allowed: handled &^ devRights, parentFd: int32(r)}
		unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	}
	return int(fd)
}
