//go:build linux && (amd64 || arm64)

package supervisor

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spawnArgs is what the child of spawn needs, ready before the clone: it
// may only make raw system calls. Its layout is read by spawn_amd64.s.
type spawnArgs struct {
	path, argv, env, dir uintptr  // *byte, **byte, **byte, *byte (0: stay)
	fds                  [3]int32 // become 0, 1 and 2; all above 2
	errPipe              int32    // the execve's errno is written here
	mask                 uint64   // the signal mask the program starts with
}

// forkExec starts path with argv and env in dir, its fds 0, 1 and 2 the
// files given, from the calling thread, so that the child inherits the
// thread's no_new_privs, Landlock domain and seccomp filter, and nothing
// else of this process but its fds 0, 1 and 2. It returns the child's
// pid, or the error of its execve (EPERM: refused). The child's execve
// waits for the supervisor; the calling goroutine meanwhile waits in the
// runtime's poller for a pipe that closes at the execve, holding nothing
// the rest of the process needs (see spawn).
func forkExec(path string, argv, env []string, dir string, files []*os.File) (int, error) {
	a := &spawnArgs{}
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
	a.path, a.argv, a.env = uintptr(unsafe.Pointer(argv0)), uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0]))
	var dirp *byte
	if dir != "" {
		if dirp, err = syscall.BytePtrFromString(dir); err != nil {
			return 0, err
		}
		a.dir = uintptr(unsafe.Pointer(dirp))
	}
	// The files, above any fd the child's dup3 writes to.
	for i, f := range files {
		fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 10)
		if err != nil {
			return 0, fmt.Errorf("starting %s: %w", path, err)
		}
		defer unix.Close(fd)
		a.fds[i] = int32(fd)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return 0, fmt.Errorf("starting %s: %w", path, err)
	}
	unix.SetNonblock(p[0], true) // else os.File reads it blocking, which works too
	errR := os.NewFile(uintptr(p[0]), "exec status")
	defer errR.Close()
	a.errPipe = int32(p[1])
	// No signal reaches the child before it has put back the default
	// actions; the program starts with none blocked.
	var all, old unix.Sigset_t
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	pid, errno, release := spawn(a)
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	unix.Close(p[1])
	if errno != 0 {
		return 0, fmt.Errorf("starting %s: %w", path, errno)
	}
	// EOF: the execve went through; 4 bytes: its errno. Read in the
	// runtime's poller: the execve waits for the supervisor.
	var buf [4]byte
	n := 0
	for n < 4 {
		m, err := errR.Read(buf[n:])
		if err != nil || m == 0 {
			break
		}
		n += m
	}
	// The child has left this process's memory (exec or exit): what it
	// read may go.
	release()
	runtime.KeepAlive(a)
	runtime.KeepAlive(argv0)
	runtime.KeepAlive(argvp)
	runtime.KeepAlive(envp)
	runtime.KeepAlive(dirp)
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
