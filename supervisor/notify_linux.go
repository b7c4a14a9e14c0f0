//go:build linux && (amd64 || arm64)

package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data.
type seccompData struct {
	nr   int32
	arch uint32
	ip   uint64
	args [6]uint64
}

// seccompNotif is struct seccomp_notif (80 bytes on every 64-bit Linux).
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	data  seccompData
}

// seccompNotifResp is struct seccomp_notif_resp.
type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// Bounds on what is read from a process: past them the execution is
// refused, since it cannot be checked whole.
const (
	maxArgs     = 1 << 17
	maxArgBytes = 8 << 20
	maxStrlen   = 1 << 20
)

// maxReport bounds a refusal's line on stderr.
const maxReport = 4096

// errGone means the process is no longer waiting for the answer.
var errGone = errors.New("the process is gone")

// loop receives the notifications of one listener and answers them.
type loop struct {
	listener int
	wake     [2]int // a pipe: stop writes, run returns
	cfg      *Config
	sem      chan struct{}
	wg       sync.WaitGroup // run and the workers
	reportMu sync.Mutex
}

func newLoop(listener int, cfg *Config) (*loop, error) {
	l := &loop{listener: listener, cfg: cfg, sem: make(chan struct{}, maxWorkers)}
	if err := unix.Pipe2(l.wake[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("creating the supervisor's pipe: %w", err)
	}
	// Wake the process on the CPU that answers (Linux 6.6): an exec
	// round trip costs less. Older kernels answer as well without.
	flags := uint64(unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, uintptr(unsafe.Pointer(&flags)))
	l.wg.Add(1)
	return l, nil
}

// stop ends run, waits for the answers in flight and closes the listener:
// executions still to come fail with ENOSYS.
func (l *loop) stop() {
	unix.Write(l.wake[1], []byte{1})
	l.wg.Wait()
	unix.Close(l.listener)
	unix.Close(l.wake[0])
	unix.Close(l.wake[1])
}

func (l *loop) run() {
	defer l.wg.Done()
	for {
		pfd := []unix.PollFd{{Fd: int32(l.listener), Events: unix.POLLIN}, {Fd: int32(l.wake[0]), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			l.report("agent-shim: error: the run-time layer stopped: %v; executions will fail", err)
			return
		}
		if pfd[1].Revents != 0 {
			return
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: no process uses the filter any more
		}
		n := new(seccompNotif)
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(l.listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(n))); errno != 0 {
			if errno == unix.EINTR || errno == unix.ENOENT {
				continue // ENOENT: the process died before we got it
			}
			l.report("agent-shim: error: the run-time layer stopped: %v; executions will fail", errno)
			return
		}
		l.sem <- struct{}{}
		l.wg.Add(1)
		go l.answer(n)
	}
}

// answer decides one execution and answers the kernel: go on, or EPERM.
// When anything fails, the answer is EPERM.
func (l *loop) answer(n *seccompNotif) {
	defer func() { <-l.sem; l.wg.Done() }()
	resp := seccompNotifResp{id: n.id, error: -int32(unix.EPERM)}
	defer func() {
		if r := recover(); r != nil { // a decider that panics refuses
			l.report("agent-shim: denied at run time: an execution by pid %d: deciding it failed: %v", n.pid, r)
			resp = seccompNotifResp{id: n.id, error: -int32(unix.EPERM)}
			unix.Syscall(unix.SYS_IOCTL, uintptr(l.listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
		}
	}()
	x, err := l.read(n)
	switch {
	case errors.Is(err, errGone):
		return
	case err != nil:
		l.report("agent-shim: denied at run time: an execution by pid %d that cannot be read: %v", n.pid, err)
	case l.cfg.Decide == nil:
		l.report("agent-shim: denied at run time: %s: nothing decides executions", x)
	default:
		v := l.cfg.Decide(x)
		if v.Allow {
			resp.error, resp.flags = 0, unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
		} else {
			l.report("agent-shim: denied at run time: %s: %s", x, v.Reason)
		}
	}
	// ENOENT: the process died meanwhile; nothing to answer.
	unix.Syscall(unix.SYS_IOCTL, uintptr(l.listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

func (l *loop) report(format string, args ...any) {
	if l.cfg.Report == nil {
		return
	}
	line := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")
	if len(line) > maxReport {
		line = line[:maxReport] + "…"
	}
	line += "\n"
	l.reportMu.Lock()
	defer l.reportMu.Unlock()
	l.cfg.Report.Write([]byte(line))
}

// valid reports whether the notification still waits for its answer: the
// pid still names the process that made the call.
func (l *loop) valid(id uint64) bool {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(l.listener), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	return errno == 0
}

// read reads the execution a notification is about from the process's
// memory, checking before and after that the process is still the one
// waiting.
func (l *loop) read(n *seccompNotif) (Exec, error) {
	x := Exec{Pid: int(n.pid)}
	var pathPtr, argvPtr uint64
	dirfd, flags := int64(unix.AT_FDCWD), uint64(0)
	switch n.data.nr {
	case nrExecve:
		pathPtr, argvPtr = n.data.args[0], n.data.args[1]
	case nrExecveat:
		dirfd, pathPtr, argvPtr, flags = int64(int32(n.data.args[0])), n.data.args[1], n.data.args[2], n.data.args[4]
	default:
		return x, fmt.Errorf("unexpected system call %d", n.data.nr)
	}
	proc := "/proc/" + strconv.Itoa(x.Pid)
	mem, err := unix.Open(proc+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if !l.valid(n.id) {
			return x, errGone
		}
		return x, fmt.Errorf("opening its memory: %w", err)
	}
	defer unix.Close(mem)
	// The pid may have been reused between the call and the open.
	if !l.valid(n.id) {
		return x, errGone
	}
	path, err := readString(mem, pathPtr)
	if err != nil {
		return x, fmt.Errorf("reading the program's path: %w", err)
	}
	if x.Argv, err = readArgv(mem, argvPtr); err != nil {
		return x, err
	}
	if x.Dir, err = os.Readlink(proc + "/cwd"); err != nil {
		return x, fmt.Errorf("reading its working directory: %w", err)
	}
	base := x.Dir
	if dirfd != unix.AT_FDCWD && !filepath.IsAbs(path) {
		if base, err = os.Readlink(proc + "/fd/" + strconv.FormatInt(dirfd, 10)); err != nil {
			return x, fmt.Errorf("reading execveat's directory: %w", err)
		}
	}
	switch {
	case path == "" && flags&unix.AT_EMPTY_PATH != 0:
		path = base // the file is the descriptor itself (fexecve)
		if !filepath.IsAbs(path) || strings.HasSuffix(path, " (deleted)") {
			return x, fmt.Errorf("runs a file with no path (%s)", path)
		}
	case path == "":
		return x, errors.New("runs an empty path")
	case !filepath.IsAbs(path):
		path = filepath.Join(base, path)
	}
	x.Path = filepath.Clean(path)
	if real, err := filepath.EvalSymlinks(x.Path); err == nil {
		x.Real = real
		x.Interp = interpreter(real)
	}
	if !l.valid(n.id) {
		return x, errGone
	}
	return x, nil
}

// readString reads a NUL-terminated string at addr, a page at a time.
func readString(mem int, addr uint64) (string, error) {
	if addr == 0 {
		return "", errors.New("a null pointer")
	}
	var out []byte
	buf := make([]byte, 4096)
	for len(out) < maxStrlen {
		chunk := buf[:4096-addr%4096]
		n, err := unix.Pread(mem, chunk, int64(addr))
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", errors.New("unreadable memory")
		}
		if i := bytes.IndexByte(chunk[:n], 0); i >= 0 {
			return string(append(out, chunk[:i]...)), nil
		}
		out = append(out, chunk[:n]...)
		addr += uint64(n)
	}
	return "", errors.New("a string too long to check")
}

// readArgv reads a NULL-terminated array of string pointers.
func readArgv(mem int, addr uint64) ([]string, error) {
	if addr == 0 {
		return nil, nil // Linux runs the program with an empty argv
	}
	var ptrs []uint64
	buf := make([]byte, 4096)
read:
	for {
		chunk := buf[:4096-addr%4096]
		n, err := unix.Pread(mem, chunk, int64(addr))
		if err != nil || n < 8 {
			return nil, fmt.Errorf("reading the arguments: %v", err)
		}
		for i := 0; i+8 <= n; i += 8 {
			p := *(*uint64)(unsafe.Pointer(&chunk[i]))
			if p == 0 {
				break read
			}
			if len(ptrs) == maxArgs {
				return nil, errors.New("too many arguments to check")
			}
			ptrs = append(ptrs, p)
		}
		addr += uint64(n &^ 7)
	}
	argv := make([]string, len(ptrs))
	total := 0
	for i, p := range ptrs {
		s, err := readString(mem, p)
		if err != nil {
			return nil, fmt.Errorf("reading argument %d: %w", i, err)
		}
		if total += len(s) + 1; total > maxArgBytes {
			return nil, errors.New("arguments too long to check")
		}
		argv[i] = s
	}
	return argv, nil
}

// interpreter returns the #! line of a script, split as Linux splits it:
// the interpreter and at most one argument; nil for other files.
func interpreter(path string) []string {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	buf := make([]byte, 256) // BINPRM_BUF_SIZE
	n, _ := unix.Read(fd, buf)
	if n < 2 || buf[0] != '#' || buf[1] != '!' {
		return nil
	}
	line := buf[2:n]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	s := strings.Trim(string(line), " \t")
	if s == "" {
		return nil
	}
	interp, arg, _ := strings.Cut(s, " ")
	if i := strings.IndexByte(interp, '\t'); i >= 0 {
		interp, arg = interp[:i], interp[i+1:]+" "+arg
	}
	if arg = strings.Trim(arg, " \t"); arg != "" {
		return []string{interp, arg}
	}
	return []string{interp}
}
