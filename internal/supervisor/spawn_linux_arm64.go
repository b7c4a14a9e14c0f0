//go:build linux

package supervisor

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// spawn forks the calling thread (a plain fork: the memory-sharing
// clone of spawn_linux_amd64.go needs a trampoline in assembly, which
// arm64 has not yet), the child running spawnChild in its copy of this
// process. Signals are blocked across it (forkExec), so no handler of
// this process runs in the copy.
func spawn(a *spawnArgs) (int, syscall.Errno, func()) {
	pid, errno := forkChild(a)
	return pid, errno, func() {}
}

//go:nosplit
//go:norace
func forkChild(a *spawnArgs) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD)|a.cloneFlags, 0, 0, 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	if r == 0 {
		spawnChild(a) // never returns
	}
	return int(r), 0
}
