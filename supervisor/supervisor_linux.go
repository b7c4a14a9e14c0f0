//go:build linux && (amd64 || arm64)

package supervisor

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Available reports whether the run-time layer can run here and, when it
// cannot, why; when it can, why names what it uses.
func Available() (ok bool, why string) {
	abi := landlockABI()
	if abi < 1 {
		return false, "Landlock is not available (a kernel before 5.13, or landlock missing from the lsm= list)"
	}
	action := uint32(unix.SECCOMP_RET_USER_NOTIF)
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); errno != 0 {
		return false, fmt.Sprintf("seccomp user notification is not available (%v)", errno)
	}
	return true, fmt.Sprintf("seccomp user notification and Landlock ABI %d", abi)
}

// maxWorkers bounds the executions decided at once; more wait in the
// kernel's queue.
const maxWorkers = 32

// forwarded are the signals the supervisor passes to the program, as if
// they had been sent to it: the supervisor stands where the program would
// be. SIGTSTP, SIGTTIN, SIGTTOU and SIGCONT keep their default action: a
// terminal's job control stops and continues the supervisor and the
// program together (they share the process group).
var forwarded = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT,
	unix.SIGWINCH, unix.SIGUSR1, unix.SIGUSR2, unix.SIGALRM}

// Run runs cfg.Path under the supervisor and returns how it ended. It
// returns when the program exits, whatever the processes it started still
// do (as exec would); from then on they cannot execute anything (ENOSYS).
// An error wrapping ErrUnavailable means the program never started,
// because the kernel refused a restriction.
func Run(ctx context.Context, cfg Config) (Status, error) {
	if ok, why := Available(); !ok {
		return Status{}, unavailable("%s", why)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return Status{}, fmt.Errorf("creating the supervisor's socket: %w", err)
	}
	sock := fds[0]
	defer unix.Close(sock)
	childSock := os.NewFile(uintptr(fds[1]), "supervisor-child")

	files := []*os.File{cfg.Stdin, cfg.Stdout, cfg.Stderr, childSock}
	for i, f := range files[:3] {
		if f == nil {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				childSock.Close()
				return Status{}, err
			}
			defer null.Close()
			files[i] = null
		}
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)

	p, err := os.StartProcess("/proc/self/exe", []string{"agent-shim", ChildArg}, &os.ProcAttr{
		Dir: cfg.Dir, Env: cfg.Env, Files: files,
	})
	childSock.Close()
	if err != nil {
		return Status{}, fmt.Errorf("starting the supervised child: %w", err)
	}
	pid := p.Pid
	defer p.Release()
	wait := func() Status {
		for {
			var ws unix.WaitStatus
			_, err := unix.Wait4(pid, &ws, 0, nil)
			if err == unix.EINTR {
				continue
			}
			switch {
			case err != nil:
				return Status{Code: 126}
			case ws.Signaled():
				return Status{Signal: int(ws.Signal())}
			}
			return Status{Code: ws.ExitStatus()}
		}
	}

	listener, err := handshake(sock, spec{Path: cfg.Path, Argv: cfg.Argv, Confine: cfg.Confine, Writable: cfg.Writable})
	if err != nil {
		unix.Kill(pid, unix.SIGKILL)
		wait()
		return Status{}, err
	}
	l, err := newLoop(listener, &cfg)
	if err != nil {
		unix.Close(listener)
		unix.Kill(pid, unix.SIGKILL)
		wait()
		return Status{}, err
	}
	go l.run()
	// The child execs once the supervisor holds the listener.
	if _, err := unix.Write(sock, []byte{1}); err != nil {
		l.stop()
		unix.Kill(pid, unix.SIGKILL)
		wait()
		return Status{}, fmt.Errorf("starting the supervised child: %w", err)
	}

	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				unix.Kill(pid, s.(syscall.Signal))
			case <-ctx.Done():
				unix.Kill(pid, unix.SIGKILL)
				<-done
				return
			case <-done:
				return
			}
		}
	}()
	st := wait()
	close(done)
	l.stop()
	return st, nil
}

// handshake sends the child what to run and receives the listener, or the
// child's reason it could not restrict itself.
func handshake(sock int, sp spec) (int, error) {
	body, err := json.Marshal(sp)
	if err != nil {
		return -1, err
	}
	msg := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	msg = append(msg, body...)
	for len(msg) > 0 {
		n, err := unix.Write(sock, msg)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("sending the supervised child what to run: %w", err)
		}
		msg = msg[n:]
	}
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("receiving the seccomp listener: %w", err)
		}
		if oobn > 0 {
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err == nil && len(msgs) == 1 {
				if fds, err := unix.ParseUnixRights(&msgs[0]); err == nil && len(fds) == 1 {
					return fds[0], nil
				}
			}
			return -1, errors.New("receiving the seccomp listener: a bad message")
		}
		if n == 0 {
			return -1, unavailable("the supervised child ended before restricting itself")
		}
		return -1, unavailable("%s", buf[:n])
	}
}

// Reraise kills the calling process with sig, as the supervised program
// died: the signal's default action (core dump included), not the Go
// runtime's (which turns SIGQUIT into a goroutine dump). It returns only
// when sig does not kill.
func Reraise(sig syscall.Signal) {
	signal.Reset(sig)
	var dfl [4]uint64 // struct sigaction of SIG_DFL: all zero on every layout
	unix.Syscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	unix.Kill(os.Getpid(), sig)
	time.Sleep(100 * time.Millisecond) // a signal sent to oneself arrives at once; this is slack
}
