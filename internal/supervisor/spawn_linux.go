//go:build linux && (amd64 || arm64)

package supervisor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/agent-shim/agent-shim/internal/supervisor/inherited"
	"golang.org/x/sys/unix"
)

// maxKept bounds the inherited descriptors (above 2) the program gets;
// past it, the others are closed at its execve.
const maxKept = 64

// spawnArgs is what spawnChild needs, ready before the clone: it may only
// make raw system calls.
type spawnArgs struct {
	path, argv, env, dir uintptr  // *byte, **byte, **byte, *byte (0: stay)
	fds                  [3]int32 // become 0, 1 and 2; all above 2
	errPipe              int32    // the failing step and errno are written here
	mask                 uint64   // the signal mask the program starts with
	ignore               uint64   // the signals (bit n-1) it starts ignoring
	nofile               inherited.Limit
	setNofile            bool // give it nofile as its RLIMIT_NOFILE
	nkeep                int32
	keep                 [maxKept]int32 // the descriptors above 2 it keeps, in increasing order

	// The mount namespace the clone made (cloneFlags), where the
	// protected paths are read-only (see Config.Protect): with a user
	// namespace, its maps to write first; the binds to make, in order.
	cloneFlags uintptr
	userns     bool
	setgroups  [21]byte // "/proc/self/setgroups\x00"
	uidMapPath [19]byte // "/proc/self/uid_map\x00"
	gidMapPath [19]byte
	deny       [4]byte
	uidMap     [32]byte
	gidMap     [32]byte
	uidMapLen  int32
	gidMapLen  int32
	root       [2]byte  // "/\x00"
	empty      [1]byte  // ""
	tmpfs      [6]byte  // "tmpfs\x00"
	tmpfsOpts  [32]byte // its options: empty, no room
	devNull    [10]byte // "/dev/null\x00"
	fdPath     [32]byte // "/proc/self/fd/N\x00", made for each mask
	nbinds     int32
	binds      [maxBinds]bindArg
	how        unix.OpenHow
	st         unix.Stat_t
	attr       unix.MountAttr

	// The restrictions the process puts on itself before its execve.
	nnp      bool // set no_new_privs
	caps     bool // clear the ambient set, write capHdr/capData (inheritable cleared), drop bounding
	capHdr   capHeader
	capData  [2]capData
	bounding uint64  // the capabilities to drop from the bounding set, as bits
	ruleset  int32   // the Landlock ruleset to restrict itself with
	filter   uintptr // the seccomp filter (*unix.SockFprog) to install, with a listener
	// The listener goes to the supervisor over sock (SCM_RIGHTS):
	// msg, iov, data and cmsg are that message, ready but for the
	// listener's number, which spawnChild writes into cmsg.
	sock int32
	msg  unix.Msghdr
	iov  unix.Iovec
	data [1]byte
	cmsg [cmsgSpace]byte
}

// maxBinds bounds the binds of a mount namespace; past it, Run falls
// back to the undo alone.
const maxBinds = 512

// bindArg is one bind of a directory or file onto itself: read-only, or
// only to make it a mount point, which the tree cannot rename or
// replace. id is the file the snapshot saw there: another is not bound.
type bindArg struct {
	path uintptr // *byte
	id   FileID
	ro   bool
	// mask: a secret, hidden under an empty read-only directory (a
	// tmpfs) or /dev/null (a file); one that is not the file the plan
	// saw fails the namespace.
	mask, dir bool
}

// cmsgSpace is CMSG_SPACE(4): one descriptor.
const cmsgSpace = unix.SizeofCmsghdr + 8

// The steps of spawnChild, as it reports the one that failed.
const (
	stepFds = 1 + iota
	stepDir
	stepCloexec
	stepUserns
	stepMount
	stepNoNewPrivs
	stepCaps
	stepLandlock
	stepFilter
	stepListener
	stepExec
)

// sigaction is the kernel's struct sigaction on amd64 and arm64.
type sigaction struct {
	handler, flags, restorer, mask uint64
}

// spawnChild is the child of spawn, on both architectures: it puts a.fds
// in place as 0, 1 and 2, gives every signal the action a
// shell's child would have (the default, but those a.ignore names, which
// it ignores: a handler of this process must not run in it), restores
// RLIMIT_NOFILE, marks every descriptor above 2 close-on-exec but the
// a.keep ones (a failure fails the start: the program must not get this
// process's descriptors); makes its mount namespace's binds (when the
// clone made one: see namespace_linux.go), enters a.dir; restricts
// itself (no_new_privs, no
// capabilities, the Landlock ruleset, the seccomp filter, whose listener
// it sends to the supervisor); sets a.mask and execs; or writes the step
// that failed and its errno to a.errPipe and exits 127. It runs in this
// process's memory (amd64) or a copy of it (arm64), on a stack that is
// no goroutine's: raw system calls only, nothing that allocates, grows
// the stack or is instrumented.
//
//go:nosplit
//go:norace
func spawnChild(a *spawnArgs) {
	var (
		e        syscall.Errno
		step     uint32
		old, act sigaction
		msg      [8]byte
		lo       uintptr
		listener uintptr
		fd, tree uintptr
	)
	for i := range a.fds {
		if _, _, e = syscall.RawSyscall(unix.SYS_DUP3, uintptr(a.fds[i]), uintptr(i), 0); e != 0 {
			step = stepFds
			goto fail
		}
	}
	for sig := uintptr(1); sig <= 64; sig++ {
		if _, _, e = syscall.RawSyscall6(unix.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
			continue // SIGKILL, SIGSTOP
		}
		switch {
		case a.ignore&(1<<(sig-1)) != 0:
			act = sigaction{handler: 1} // SIG_IGN
		case old.handler > 1:
			act = sigaction{} // SIG_DFL for a handler; an ignored signal stays ignored, as across execve
		default:
			continue
		}
		syscall.RawSyscall6(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	}
	if a.setNofile {
		syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&a.nofile)), 0, 0, 0)
	}
	lo = 3
	for i := range a.keep {
		if int32(i) >= a.nkeep {
			break
		}
		if k := uintptr(a.keep[i]); k > lo {
			if _, _, e = syscall.RawSyscall(unix.SYS_CLOSE_RANGE, lo, k-1, unix.CLOSE_RANGE_CLOEXEC); e != 0 {
				step = stepCloexec
				goto fail
			}
		}
		lo = uintptr(a.keep[i]) + 1
	}
	if _, _, e = syscall.RawSyscall(unix.SYS_CLOSE_RANGE, lo, ^uintptr(0)>>32, unix.CLOSE_RANGE_CLOEXEC); e != 0 {
		step = stepCloexec
		goto fail
	}
	// The mount namespace: the user namespace's maps (this process's
	// uid and gid, as outside), then every mount made a slave (nothing
	// made here reaches the supervisor's namespace), then the binds.
	if a.userns {
		step = stepUserns
		// /proc/self of a process that is not dumpable (the supervisor's
		// memory is not) is root's: dumpable for the maps' writing, no
		// longer. The tree does not exist yet, and nothing else of the
		// person's may trace the supervisor meanwhile but what could
		// before Run.
		syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 1, 0, 0, 0, 0)
		if fd, _, e = syscall.RawSyscall6(unix.SYS_OPENAT, uintptr(atFdcwd), uintptr(unsafe.Pointer(&a.setgroups[0])), unix.O_WRONLY|unix.O_CLOEXEC, 0, 0, 0); e == 0 {
			syscall.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&a.deny[0])), uintptr(len(a.deny)))
			syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
		}
		if fd, _, e = syscall.RawSyscall6(unix.SYS_OPENAT, uintptr(atFdcwd), uintptr(unsafe.Pointer(&a.uidMapPath[0])), unix.O_WRONLY|unix.O_CLOEXEC, 0, 0, 0); e != 0 {
			goto fail
		}
		_, _, e = syscall.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&a.uidMap[0])), uintptr(a.uidMapLen))
		syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
		if e != 0 {
			goto fail
		}
		if fd, _, e = syscall.RawSyscall6(unix.SYS_OPENAT, uintptr(atFdcwd), uintptr(unsafe.Pointer(&a.gidMapPath[0])), unix.O_WRONLY|unix.O_CLOEXEC, 0, 0, 0); e != 0 {
			goto fail
		}
		_, _, e = syscall.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&a.gidMap[0])), uintptr(a.gidMapLen))
		syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
		syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 0, 0, 0, 0, 0)
		if e != 0 {
			goto fail
		}
	}
	if a.cloneFlags&unix.CLONE_NEWNS != 0 {
		step = stepMount
		if _, _, e = syscall.RawSyscall6(unix.SYS_MOUNT, 0, uintptr(unsafe.Pointer(&a.root[0])), 0, unix.MS_REC|unix.MS_SLAVE, 0, 0); e != 0 {
			goto fail
		}
		for i := range a.binds {
			if int32(i) >= a.nbinds {
				break
			}
			b := &a.binds[i]
			// By path, in this namespace (a descriptor of the
			// supervisor's names a mount of its namespace), no link on
			// the way, and the file the snapshot saw: else left to the
			// undo.
			if fd, _, e = syscall.RawSyscall6(unix.SYS_OPENAT2, uintptr(atFdcwd), b.path, uintptr(unsafe.Pointer(&a.how)), unsafe.Sizeof(a.how), 0, 0); e != 0 {
				continue
			}
			if _, _, e = syscall.RawSyscall(unix.SYS_FSTAT, fd, uintptr(unsafe.Pointer(&a.st)), 0); e != 0 || uint64(a.st.Dev) != b.id.Dev || a.st.Ino != b.id.Ino {
				syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
				if b.mask {
					e = unix.ESTALE
					goto fail
				}
				continue
			}
			if b.mask && b.dir {
				// An empty read-only tmpfs over it, through the
				// descriptor's name (/proc/self/fd/N), which no one can
				// redirect.
				n := 14 // len("/proc/self/fd/")
				if fd >= 10000 {
					n = -1
				} else {
					if fd >= 1000 {
						a.fdPath[n] = byte('0' + fd/1000)
						n++
					}
					if fd >= 100 {
						a.fdPath[n] = byte('0' + fd/100%10)
						n++
					}
					if fd >= 10 {
						a.fdPath[n] = byte('0' + fd/10%10)
						n++
					}
					a.fdPath[n] = byte('0' + fd%10)
					a.fdPath[n+1] = 0
				}
				if n < 0 {
					e = unix.EMFILE
				} else {
					_, _, e = syscall.RawSyscall6(unix.SYS_MOUNT, uintptr(unsafe.Pointer(&a.tmpfs[0])), uintptr(unsafe.Pointer(&a.fdPath[0])),
						uintptr(unsafe.Pointer(&a.tmpfs[0])), unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, uintptr(unsafe.Pointer(&a.tmpfsOpts[0])), 0)
				}
				syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
				if e != 0 {
					goto fail
				}
				continue
			}
			if b.mask {
				// /dev/null over a file, read-only.
				syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
				if fd, _, e = syscall.RawSyscall6(unix.SYS_OPENAT2, uintptr(atFdcwd), b.path, uintptr(unsafe.Pointer(&a.how)), unsafe.Sizeof(a.how), 0, 0); e != 0 {
					goto fail
				}
				if tree, _, e = syscall.RawSyscall(unix.SYS_OPEN_TREE, uintptr(atFdcwd), uintptr(unsafe.Pointer(&a.devNull[0])),
					unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC); e != 0 {
					syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
					goto fail
				}
				_, _, e = syscall.RawSyscall6(unix.SYS_MOUNT_SETATTR, tree, uintptr(unsafe.Pointer(&a.empty[0])),
					unix.AT_EMPTY_PATH, uintptr(unsafe.Pointer(&a.attr)), unsafe.Sizeof(a.attr), 0)
				if e == 0 {
					_, _, e = syscall.RawSyscall6(unix.SYS_MOVE_MOUNT, tree, uintptr(unsafe.Pointer(&a.empty[0])), fd,
						uintptr(unsafe.Pointer(&a.empty[0])), unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH, 0)
				}
				syscall.RawSyscall(unix.SYS_CLOSE, tree, 0, 0)
				syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
				if e != 0 {
					goto fail
				}
				continue
			}
			if tree, _, e = syscall.RawSyscall(unix.SYS_OPEN_TREE, fd, uintptr(unsafe.Pointer(&a.empty[0])),
				unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE); e != 0 {
				syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
				goto fail
			}
			if b.ro {
				_, _, e = syscall.RawSyscall6(unix.SYS_MOUNT_SETATTR, tree, uintptr(unsafe.Pointer(&a.empty[0])),
					unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, uintptr(unsafe.Pointer(&a.attr)), unsafe.Sizeof(a.attr), 0)
			}
			if e == 0 {
				_, _, e = syscall.RawSyscall6(unix.SYS_MOVE_MOUNT, tree, uintptr(unsafe.Pointer(&a.empty[0])), fd,
					uintptr(unsafe.Pointer(&a.empty[0])), unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH, 0)
			}
			syscall.RawSyscall(unix.SYS_CLOSE, tree, 0, 0)
			syscall.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
			if e != 0 {
				goto fail
			}
		}
	}
	// The working directory, entered after the binds: entered before, it
	// would be the directory below them, where they do not hold.
	if a.dir != 0 {
		if _, _, e = syscall.RawSyscall(unix.SYS_CHDIR, a.dir, 0, 0); e != 0 {
			step = stepDir
			goto fail
		}
	}
	// The restrictions, on this process alone: the supervisor's threads
	// stay outside them.
	if a.nnp {
		if _, _, e = syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
			step = stepNoNewPrivs
			goto fail
		}
	}
	if a.caps {
		step = stepCaps
		if _, _, e = syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 && e != unix.EINVAL {
			goto fail
		}
		// The bounding set first, while CAP_SETPCAP is still held (a
		// user namespace's, too).
		for c := uintptr(0); c < 64; c++ {
			if a.bounding&(1<<c) == 0 {
				continue
			}
			if _, _, e = syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0, 0, 0, 0); e == unix.EINVAL {
				break // past the last capability
			} else if e != 0 {
				goto fail
			}
		}
		if _, _, e = syscall.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&a.capHdr)), uintptr(unsafe.Pointer(&a.capData[0])), 0); e != 0 {
			goto fail
		}
	}
	if _, _, e = syscall.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(a.ruleset), 0, 0); e != 0 {
		step = stepLandlock
		goto fail
	}
	if listener, _, e = syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, a.filter); e != 0 {
		step = stepFilter
		goto fail
	}
	// From here on the filter watches this process: sendmsg and
	// rt_sigprocmask pass, the execve is the listener's first
	// notification. The listener is close-on-exec.
	*(*int32)(unsafe.Pointer(&a.cmsg[unix.SizeofCmsghdr])) = int32(listener)
	if _, _, e = syscall.RawSyscall(unix.SYS_SENDMSG, uintptr(a.sock), uintptr(unsafe.Pointer(&a.msg)), 0); e != 0 {
		step = stepListener
		goto fail
	}
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&a.mask)), 0, 8, 0, 0)
	_, _, e = syscall.RawSyscall(unix.SYS_EXECVE, a.path, a.argv, a.env)
	step = stepExec
fail:
	if a.userns {
		syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 0, 0, 0, 0, 0)
	}
	msg = [8]byte{byte(step), byte(step >> 8), byte(step >> 16), byte(step >> 24), byte(e), byte(e >> 8), byte(e >> 16), byte(e >> 24)}
	syscall.RawSyscall(unix.SYS_WRITE, uintptr(a.errPipe), uintptr(unsafe.Pointer(&msg[0])), 8)
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 127, 0, 0)
	}
}

// starting is a program whose execve has been asked for: the answer is
// its wait's. It holds what the child reads until then.
type starting struct {
	path    string
	pid     int
	errR    *os.File // closes at the execve; the step and errno if it fails
	sock    int      // the listener comes on it
	a       *spawnArgs
	keep    [6]any // the strings, the filter and the binds' paths a points to
	release func()
}

// restrictions are what the program's process puts on itself before its
// execve (see spawnChild).
type restrictions struct {
	noNewPrivs bool
	dropCaps   bool
	capHdr     capHeader
	capData    [2]capData
	bounding   uint64
	ruleset    int
	filter     *unix.SockFprog
	ns         *nsPlan // the mount namespace, nil for none
	// What the ruleset was made of, to make it again without the
	// namespace.
	confine         bool
	writes, secrets []string
}

// withoutNamespace drops the namespace from r: the ruleset is made again
// to keep the secrets, which the namespace masked.
func (r *restrictions) withoutNamespace() error {
	r.ns = nil
	if len(r.secrets) == 0 {
		return nil
	}
	fd, err := newRuleset(r.confine, r.writes, r.secrets)
	if err != nil {
		return unavailable("%v", err)
	}
	unix.Close(r.ruleset)
	r.ruleset = fd
	return nil
}

// forkExec starts path with argv and env in dir, its fds 0, 1 and 2 the
// files given, restricted by r; of this process it gets only what a shell
// in its place would give it: the descriptors this process inherited
// open (inherited.Files, when they still hold the same files), the
// signals ignored when it started (ignore), its RLIMIT_NOFILE as it
// started. The child's execve waits for the supervisor, on the listener
// that listener returns; wait waits for the answer.
func forkExec(path string, argv, env []string, dir string, files []*os.File, ignore uint64, r *restrictions) (*starting, error) {
	a := &spawnArgs{ignore: ignore, nnp: r.noNewPrivs, caps: r.dropCaps, capHdr: r.capHdr, capData: r.capData,
		bounding: r.bounding, ruleset: int32(r.ruleset), filter: uintptr(unsafe.Pointer(r.filter))}
	nsKeep, err := setNamespace(a, r.ns)
	if err != nil {
		return nil, err
	}
	if a.userns && a.caps {
		// In its user namespace the process holds every capability,
		// CAP_SETPCAP among them: it empties its bounding set too.
		a.bounding = ^uint64(0)
	}
	argv0, err := syscall.BytePtrFromString(path)
	if err != nil {
		return nil, err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return nil, err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return nil, err
	}
	a.path, a.argv, a.env = uintptr(unsafe.Pointer(argv0)), uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0]))
	if dir == "" && r.ns != nil {
		// The working directory entered before the binds is the one
		// below them: the child enters it again, by name, after them.
		if wd, err := os.Getwd(); err == nil {
			dir = wd
		}
	}
	var dirp *byte
	if dir != "" {
		if dirp, err = syscall.BytePtrFromString(dir); err != nil {
			return nil, err
		}
		a.dir = uintptr(unsafe.Pointer(dirp))
	}
	// Package syscall raised the soft limit at start; a process that set
	// it since (or had it set by prlimit) meant it.
	if start, ok := inherited.Nofile(); ok {
		var now unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_NOFILE, &now) == nil && now.Max == start.Max && now.Cur == start.Max-1 && start.Cur < now.Cur {
			a.nofile, a.setNofile = start, true
		}
	}
	if fs, ok := inherited.Files(); ok {
		for _, f := range fs {
			if int(a.nkeep) == maxKept {
				break
			}
			var st unix.Stat_t
			flags, err := unix.FcntlInt(uintptr(f.Fd), unix.F_GETFD, 0)
			if err != nil || flags&unix.FD_CLOEXEC != 0 || unix.Fstat(f.Fd, &st) != nil || st.Dev != f.Dev || st.Ino != f.Ino {
				continue // closed, or another file now
			}
			a.keep[a.nkeep] = int32(f.Fd)
			a.nkeep++
		}
	}
	// The files, above any fd the child's dup3 writes to.
	for i, f := range files {
		fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 10)
		if err != nil {
			return nil, fmt.Errorf("starting %s: %w", path, err)
		}
		defer unix.Close(fd)
		a.fds[i] = int32(fd)
	}
	// The listener's way back: a socket pair, and the message the child
	// sends on its end.
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	defer unix.Close(sp[1])
	unix.SetNonblock(sp[0], true)
	a.sock = int32(sp[1])
	a.iov = unix.Iovec{Base: &a.data[0], Len: 1}
	a.msg = unix.Msghdr{Iov: &a.iov, Iovlen: 1, Control: &a.cmsg[0], Controllen: cmsgSpace}
	h := (*unix.Cmsghdr)(unsafe.Pointer(&a.cmsg[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SCM_RIGHTS
	h.SetLen(unix.CmsgLen(4))
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(sp[0])
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	unix.SetNonblock(p[0], true) // else os.File reads it blocking, which works too
	errR := os.NewFile(uintptr(p[0]), "exec status")
	a.errPipe = int32(p[1])
	// No signal reaches the child before it has put back the default
	// actions; the program starts with none blocked. The mask is the
	// thread's: the goroutine stays on it meanwhile.
	runtime.LockOSThread()
	var all, old unix.Sigset_t
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	pid, errno, release := spawn(a)
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	runtime.UnlockOSThread()
	unix.Close(p[1])
	if errno != 0 {
		release()
		errR.Close()
		unix.Close(sp[0])
		if a.cloneFlags != 0 {
			return nil, fmt.Errorf("%w: starting %s: %v", errNoNamespace, path, errno)
		}
		return nil, fmt.Errorf("starting %s: %w", path, errno)
	}
	return &starting{path: path, pid: pid, errR: errR, sock: sp[0], a: a, keep: [6]any{argv0, argvp, envp, dirp, r.filter, nsKeep}, release: release}, nil
}

// listener receives the seccomp listener the child installed on itself;
// it fails when the child ended first (wait says why). It waits in the
// runtime's poller, as wait does.
func (s *starting) listener() (int, error) {
	f := os.NewFile(uintptr(s.sock), "seccomp listener's way")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	var data [1]byte
	oob := make([]byte, unix.CmsgSpace(4))
	var oobn int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			_, oobn, _, _, rerr = unix.Recvmsg(int(fd), data[:], oob, unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT)
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN
			}
		}
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return -1, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, errors.New("no seccomp listener from the program's process")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, errors.New("no seccomp listener from the program's process")
	}
	return fds[0], nil
}

// wait waits for the answer to the execve and returns the program's pid,
// or the error of the step that failed (an execve's EPERM: refused; an
// error wrapping ErrUnavailable: a restriction the kernel refused). It
// reads in the runtime's poller: EOF, the execve went through; 8 bytes,
// the step and its errno.
func (s *starting) wait() (int, error) {
	defer s.errR.Close()
	var buf [8]byte
	n := 0
	for n < len(buf) {
		m, err := s.errR.Read(buf[n:])
		if err != nil || m == 0 {
			break
		}
		n += m
	}
	// The child has left this process's memory (exec or exit): what it
	// read may go.
	s.release()
	runtime.KeepAlive(s.a)
	runtime.KeepAlive(s.keep)
	if n < len(buf) {
		return s.pid, nil
	}
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(s.pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	errno := syscall.Errno(binary.LittleEndian.Uint32(buf[4:]))
	switch binary.LittleEndian.Uint32(buf[:4]) {
	case stepFds:
		return 0, fmt.Errorf("putting its standard streams in place: %w", errno)
	case stepCloexec:
		return 0, fmt.Errorf("keeping this process's descriptors from it: %w", errno)
	case stepUserns:
		return 0, fmt.Errorf("%w: mapping the user namespace: %v", errNoNamespace, errno)
	case stepMount:
		return 0, fmt.Errorf("%w: making the protected paths read-only: %v", errNoNamespace, errno)
	case stepNoNewPrivs:
		return 0, unavailable("setting no_new_privs: %v", errno)
	case stepCaps:
		return 0, unavailable("dropping the capabilities: %v", errno)
	case stepLandlock:
		return 0, unavailable("enforcing the landlock ruleset: %v", errno)
	case stepFilter:
		return 0, unavailable("installing the seccomp filter: %v", errno)
	case stepListener:
		return 0, fmt.Errorf("handing over the seccomp listener: %w", errno)
	}
	return 0, errno
}
