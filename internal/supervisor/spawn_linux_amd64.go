//go:build linux

package supervisor

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spawnStack is the child's stack: it runs beside this process, in its
// memory, before its execve, so it cannot use a goroutine's (which the
// runtime may move).
const spawnStack = 16 << 10

// spawn clones the calling thread with CLONE_VM, the child running
// spawnChild on a stack of its own (rawSpawn, spawn_amd64.s, is only the
// trampoline).
//
// Sharing the memory, the clone copies no page table and leaves no page
// copy-on-write: a plain fork of a Go process costs about 2.5 ms here,
// most of it in the faults that follow. Without CLONE_VFORK the calling
// thread goes on at once: it holds nothing while the execve waits for
// the supervisor (a vfork would hold its P, and a stop-the-world meanwhile
// would wait for it forever). The caller keeps a and what it points to
// until the child has left this memory, then calls release.
func spawn(a *spawnArgs) (pid int, errno syscall.Errno, release func()) {
	stack, err := unix.Mmap(-1, 0, spawnStack, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_STACK)
	if err != nil {
		return 0, err.(syscall.Errno), func() {}
	}
	top := uintptr(unsafe.Pointer(&stack[0])) + spawnStack
	p, e := rawSpawn(top, a, spawnChildPC, a.cloneFlags)
	return int(p), syscall.Errno(e), func() { unix.Munmap(stack) }
}

// spawnChildPC is where spawnChild's code starts, for rawSpawn to call
// it in Go's register convention (a func value holds that entry). Called
// from assembly by name, it would go through a wrapper that the race
// detector instruments, which cannot run in the child.
var spawnChildPC = func() uintptr {
	f := spawnChild
	return **(**uintptr)(unsafe.Pointer(&f))
}()

// rawSpawn clones with CLONE_VM and flags (the namespaces) onto stack;
// the child calls fn(a) (spawnChild) and never returns.
func rawSpawn(stack uintptr, a *spawnArgs, fn uintptr, flags uintptr) (pid, errno uintptr)
