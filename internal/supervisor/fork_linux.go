//go:build linux && (amd64 || arm64)

package supervisor

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// forkExec starts path with argv and env in dir, its fds 0, 1 and 2 the
// files given, from the calling thread: a plain fork (no CLONE_VM), so the
// child inherits the thread's no_new_privs, Landlock domain and seccomp
// filter, and the thread waits for nothing but a pipe while the child's
// execve waits for the supervisor. (os.StartProcess forks with
// CLONE_VFORK, and the vforking thread keeps its P until the child execs:
// with the exec held by the supervisor, a stop-the-world, or a single P,
// would deadlock.) It returns the child's pid, or the error of its
// execve (EPERM: refused).
func forkExec(path string, argv, env []string, dir string, files []*os.File) (int, error) {
	argv0, err := syscall.BytePtrFromString(path)
	if err != nil {
		return 0, err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return 0, err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return 0, err
	}
	var dirp *byte
	if dir != "" {
		if dirp, err = syscall.BytePtrFromString(dir); err != nil {
			return 0, err
		}
	}
	// The files, above any fd the child's dup3 writes to.
	var fds [3]int32
	for i, f := range files {
		fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 10)
		if err != nil {
			return 0, fmt.Errorf("starting %s: %w", path, err)
		}
		defer unix.Close(fd)
		fds[i] = int32(fd)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return 0, fmt.Errorf("starting %s: %w", path, err)
	}
	unix.SetNonblock(p[0], true) // else os.File reads it blocking, which works too
	errR := os.NewFile(uintptr(p[0]), "exec status")
	defer errR.Close()
	// No signal reaches the child's copy of Go before its execve; the
	// program starts with none blocked.
	var all, old, none unix.Sigset_t
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	pid, errno := forkChild(argv0, &argvp[0], &envp[0], dirp, &fds, int32(p[1]), &none)
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	unix.Close(p[1])
	if errno != 0 {
		return 0, fmt.Errorf("starting %s: %w", path, errno)
	}
	// EOF: the execve went through; 4 bytes: its errno. Read in the
	// runtime's poller: the execve waits for the supervisor, and a thread
	// blocked in read meanwhile keeps the runtime's monitor awake.
	var buf [4]byte
	n := 0
	for n < 4 {
		m, err := errR.Read(buf[n:])
		if err != nil || m == 0 {
			break
		}
		n += m
	}
	if n == 4 {
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
				break
			}
		}
		return 0, syscall.Errno(binary.LittleEndian.Uint32(buf[:]))
	}
	return pid, nil
}

// forkChild forks; the child puts fds in place, enters dir, sets its
// signal mask and execs, or writes the errno to errPipe and exits 127. The
// child runs a copy of this process with one thread: it may only make raw
// system calls, no allocation, no stack growth.
//
//go:nosplit
//go:norace
func forkChild(path *byte, argv, env **byte, dir *byte, fds *[3]int32, errPipe int32, mask *unix.Sigset_t) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	if r != 0 {
		return int(r), 0
	}
	for i := 0; i < 3; i++ {
		if _, _, e = syscall.RawSyscall(unix.SYS_DUP3, uintptr(fds[i]), uintptr(i), 0); e != 0 {
			goto fail
		}
	}
	if dir != nil {
		if _, _, e = syscall.RawSyscall(unix.SYS_CHDIR, uintptr(unsafe.Pointer(dir)), 0, 0); e != 0 {
			goto fail
		}
	}
	// Dumpable again (the supervisor is not, see Run), so that the
	// supervisor may read this process's memory at its execve.
	syscall.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 1, 0)
	// The program gets fds 0, 1 and 2 only, whatever this process
	// inherited without close-on-exec.
	syscall.RawSyscall(unix.SYS_CLOSE_RANGE, 3, ^uintptr(0)>>32, unix.CLOSE_RANGE_CLOEXEC)
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(mask)), 0, 8, 0, 0)
	_, _, e = syscall.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(argv)), uintptr(unsafe.Pointer(env)))
fail:
	errb := [4]byte{byte(e), byte(e >> 8), byte(e >> 16), byte(e >> 24)}
	syscall.RawSyscall(unix.SYS_WRITE, uintptr(errPipe), uintptr(unsafe.Pointer(&errb[0])), 4)
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 127, 0, 0)
	}
}
