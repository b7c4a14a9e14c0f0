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

// starting is a program whose execve has been asked for: the answer is
// its wait's. It holds what the child reads until then.
type starting struct {
	path    string
	pid     int
	errR    *os.File // closes at the execve; the errno if it fails
	a       *spawnArgs
	keep    [4]any // the strings a points to
	release func()
}

// forkExec starts path with argv and env in dir, its fds 0, 1 and 2 the
// files given, from the calling thread, so that the child inherits the
// thread's no_new_privs, Landlock domain and seccomp filter, and nothing
// else of this process but its fds 0, 1 and 2. The child's execve waits
// for the supervisor: the caller may leave the thread (and end it) and
// wait for the answer with wait, on any goroutine.
func forkExec(path string, argv, env []string, dir string, files []*os.File) (*starting, error) {
	a := &spawnArgs{}
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
	var dirp *byte
	if dir != "" {
		if dirp, err = syscall.BytePtrFromString(dir); err != nil {
			return nil, err
		}
		a.dir = uintptr(unsafe.Pointer(dirp))
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
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	unix.SetNonblock(p[0], true) // else os.File reads it blocking, which works too
	errR := os.NewFile(uintptr(p[0]), "exec status")
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
		release()
		errR.Close()
		return nil, fmt.Errorf("starting %s: %w", path, errno)
	}
	return &starting{path: path, pid: pid, errR: errR, a: a, keep: [4]any{argv0, argvp, envp, dirp}, release: release}, nil
}

// wait waits for the answer to the execve and returns the program's pid,
// or the execve's error (EPERM: refused). It reads in the runtime's
// poller: EOF, the execve went through; 4 bytes, its errno.
func (s *starting) wait() (int, error) {
	defer s.errR.Close()
	var buf [4]byte
	n := 0
	for n < 4 {
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
	if n == 4 {
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(s.pid, &ws, 0, nil); err != unix.EINTR {
				break
			}
		}
		return 0, syscall.Errno(binary.LittleEndian.Uint32(buf[:]))
	}
	return s.pid, nil
}
