//go:build linux

package supervisor

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spawn forks the calling thread (a plain fork: the memory-sharing clone
// of spawn_linux_amd64.go has no arm64 assembly yet); the child puts
// a.fds in place, enters a.dir, marks every other fd close-on-exec, sets
// a.mask and execs, or writes the errno to a.errPipe and exits 127. It
// runs a copy of this process with one thread: raw system calls only, no
// allocation, no stack growth; a signal arriving before the execve runs
// Go's handler in that copy, harmlessly.
func spawn(a *spawnArgs) (int, syscall.Errno, func()) {
	pid, errno := forkChild(a)
	return pid, errno, func() {}
}

//go:nosplit
//go:norace
func forkChild(a *spawnArgs) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	if r != 0 {
		return int(r), 0
	}
	for i := 0; i < 3; i++ {
		if _, _, e = syscall.RawSyscall(unix.SYS_DUP3, uintptr(a.fds[i]), uintptr(i), 0); e != 0 {
			goto fail
		}
	}
	if a.dir != 0 {
		if _, _, e = syscall.RawSyscall(unix.SYS_CHDIR, a.dir, 0, 0); e != 0 {
			goto fail
		}
	}
	syscall.RawSyscall(unix.SYS_CLOSE_RANGE, 3, ^uintptr(0)>>32, unix.CLOSE_RANGE_CLOEXEC)
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&a.mask)), 0, 8, 0, 0)
	_, _, e = syscall.RawSyscall(unix.SYS_EXECVE, a.path, a.argv, a.env)
fail:
	errb := [4]byte{byte(e), byte(e >> 8), byte(e >> 16), byte(e >> 24)}
	syscall.RawSyscall(unix.SYS_WRITE, uintptr(a.errPipe), uintptr(unsafe.Pointer(&errb[0])), 4)
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 127, 0, 0)
	}
}
