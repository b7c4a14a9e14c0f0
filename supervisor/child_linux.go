//go:build linux && (amd64 || arm64)

package supervisor

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// childFd is the child's end of the socket to the supervisor.
const childFd = 3

// maxSpec bounds the spec the supervisor sends the child.
const maxSpec = 16 << 20

// spec is what the child runs, sent over the socket (never on the
// command line, which anyone can write).
type spec struct {
	Path     string   `json:"path"`
	Argv     []string `json:"argv"`
	Confine  bool     `json:"confine"`
	Writable []string `json:"writable"`
}

// Child is the hidden child mode (argv[1] == ChildArg): it checks that its
// parent is this binary holding the other end of fd 3, reads what to run
// from it, restricts its thread (no_new_privs, Landlock, the seccomp
// filter), sends the filter's listener to the parent and execs the
// program. It returns only when it fails, with the exit status to exit
// with: 126, the status of a command that cannot run.
func Child(stderr io.Writer) int {
	runtime.LockOSThread() // never unlocked: the restrictions are this thread's
	if err := checkParent(); err != nil {
		fmt.Fprintf(stderr, "agent-shim: error: %v (this mode is for agent-shim's own use)\n", err)
		return 126
	}
	// Until the program runs, failures go to the supervisor, which
	// decides whether to run without the run-time layer.
	fail := func(format string, args ...any) int {
		msg := fmt.Sprintf(format, args...)
		if err := unix.Sendmsg(childFd, []byte(msg), nil, nil, 0); err != nil {
			fmt.Fprintf(stderr, "agent-shim: error: supervised child: %s\n", msg)
		}
		return 126
	}
	sp, err := readSpec()
	if err != nil {
		return fail("%v", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("setting no_new_privs: %v", err)
	}
	if err := restrictWrites(sp.Confine, sp.Writable); err != nil {
		return fail("%v", err)
	}
	listener, err := installFilter(sp.Confine)
	if err != nil {
		return fail("%v", err)
	}
	if err := unix.Sendmsg(childFd, []byte{1}, unix.UnixRights(listener), nil, 0); err != nil {
		return fail("sending the listener: %v", err)
	}
	unix.Close(listener)
	// Wait for the supervisor to hold the listener: the exec below
	// waits for its answer.
	var ack [1]byte
	if err := readFull(childFd, ack[:]); err != nil {
		return 126
	}
	unix.Close(childFd)
	// The program gets fds 0, 1 and 2 only.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	err = syscall.Exec(sp.Path, sp.Argv, os.Environ())
	if err != syscall.EPERM { // on EPERM, the supervisor said why
		fmt.Fprintf(stderr, "agent-shim: error: running %s: %v\n", sp.Path, err)
	}
	return 126
}

// checkParent makes sure fd 3 is a socket whose other end the parent
// holds, and that the parent is this very program: only the supervisor can
// start the child mode.
func checkParent() error {
	typ, err := unix.GetsockoptInt(childFd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil || typ != unix.SOCK_STREAM {
		return fmt.Errorf("fd %d is not the supervisor's socket", childFd)
	}
	cred, err := unix.GetsockoptUcred(childFd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return fmt.Errorf("reading the socket's peer: %v", err)
	}
	ppid := os.Getppid()
	if int(cred.Pid) != ppid {
		return fmt.Errorf("the socket's peer (pid %d) is not the parent (pid %d)", cred.Pid, ppid)
	}
	self, err1 := os.Stat("/proc/self/exe")
	parent, err2 := os.Stat(fmt.Sprintf("/proc/%d/exe", ppid))
	if err1 != nil || err2 != nil || !os.SameFile(self, parent) {
		return fmt.Errorf("the parent (pid %d) is not agent-shim", ppid)
	}
	return nil
}

func readSpec() (*spec, error) {
	var n [4]byte
	if err := readFull(childFd, n[:]); err != nil {
		return nil, fmt.Errorf("reading what to run: %v", err)
	}
	size := binary.LittleEndian.Uint32(n[:])
	if size > maxSpec {
		return nil, fmt.Errorf("reading what to run: %d bytes is too long", size)
	}
	buf := make([]byte, size)
	if err := readFull(childFd, buf); err != nil {
		return nil, fmt.Errorf("reading what to run: %v", err)
	}
	var sp spec
	if err := json.Unmarshal(buf, &sp); err != nil {
		return nil, fmt.Errorf("reading what to run: %v", err)
	}
	if sp.Path == "" || len(sp.Argv) == 0 {
		return nil, fmt.Errorf("reading what to run: no program")
	}
	return &sp, nil
}

// readFull reads len(buf) bytes from fd.
func readFull(fd int, buf []byte) error {
	for len(buf) > 0 {
		n, err := unix.Read(fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return io.ErrUnexpectedEOF
		}
		buf = buf[n:]
	}
	return nil
}

// installFilter installs the seccomp filter on the calling thread and
// returns its listener; meta sends the metadata calls to the supervisor.
func installFilter(meta bool) (int, error) {
	insns, err := assemble(filterProgram(meta))
	if err != nil {
		return -1, err
	}
	prog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(insns)
	if errno != 0 {
		return -1, fmt.Errorf("installing the seccomp filter: %v", errno)
	}
	return int(fd), nil
}
