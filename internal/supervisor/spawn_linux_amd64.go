//go:build linux

package supervisor

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The offsets spawn_amd64.s reads, held at compile time: each array has
// length 0 only when the field is where the assembly looks.
var (
	_ [0]struct{} = [unsafe.Offsetof(spawnArgs{}.path) - 0]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(spawnArgs{}.argv) - 8]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(spawnArgs{}.env) - 16]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(spawnArgs{}.dir) - 24]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(spawnArgs{}.fds) - 32]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(spawnArgs{}.errPipe) - 44]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(spawnArgs{}.mask) - 48]struct{}{}
)

// spawnStack is the child's stack: it runs beside this process, in its
// memory, before its execve, so it cannot use a goroutine's (which the
// runtime may move).
const spawnStack = 16 << 10

// spawn clones the calling thread with CLONE_VM, the child on a stack of
// its own running rawSpawn's child half (spawn_amd64.s): it puts a.fds
// in place, enters a.dir, puts back the default action of every handled
// signal (its handlers are a copy of Go's, which must not run in it),
// marks every other fd close-on-exec, sets a.mask and execs, or writes
// the errno to a.errPipe and exits 127.
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
	p, e := rawSpawn(top, a)
	return int(p), syscall.Errno(e), func() { unix.Munmap(stack) }
}

// rawSpawn is spawn's clone; the child never returns from it.
func rawSpawn(stack uintptr, a *spawnArgs) (pid, errno uintptr)
