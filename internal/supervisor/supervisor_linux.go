//go:build linux && (amd64 || arm64)

package supervisor

import (
	"context"
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
//
// The program's process puts the restrictions on itself (no_new_privs,
// no capabilities, the Landlock domain, the seccomp filter, whose
// listener it hands to the supervisor) before its execve, which the
// filter reports: the program runs restricted from its first instruction,
// its own execution decided like every other, without a second start of
// this binary, and no thread of the supervisor is ever restricted or in
// the tree's domain.
func Run(ctx context.Context, cfg Config) (Status, error) {
	if ok, why := Available(); !ok {
		return Status{}, unavailable("%s", why)
	}
	files := []*os.File{cfg.Stdin, cfg.Stdout, cfg.Stderr}
	for i, f := range files {
		if f == nil {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				return Status{}, err
			}
			defer null.Close()
			files[i] = null
		}
	}
	// A signal this process started ignoring is the person's shell's
	// choice (nohup's SIGHUP): the program starts ignoring it too, and
	// nothing is forwarded (Notify would stop ignoring it).
	sigs := make(chan os.Signal, 16)
	for _, sig := range forwarded {
		if ignoredAtStart&sigBit(sig.(syscall.Signal)) == 0 {
			signal.Notify(sigs, sig)
		}
	}
	defer signal.Stop(sigs)

	// The supervisor is not dumpable while the tree runs: no process of
	// the user's may trace it, whatever Yama says (the tree's may not
	// anyway, being in a Landlock domain the supervisor is outside).
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err == nil && d != 0 {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			return Status{}, fmt.Errorf("making the supervisor untraceable: %w", err)
		}
		defer unix.Prctl(unix.PR_SET_DUMPABLE, uintptr(d), 0, 0, 0)
	}
	r, writes, err := prepare(&cfg)
	if err != nil {
		return Status{}, err
	}
	defer func() { unix.Close(r.ruleset) }()
	failed := func(err error) (Status, error) {
		if errors.Is(err, ErrUnavailable) {
			return Status{}, err
		}
		// EPERM: the supervisor refused the program and said why.
		if !errors.Is(err, unix.EPERM) && cfg.Stderr != nil {
			fmt.Fprintf(cfg.Stderr, "agent-shim: error: running %s: %v\n", cfg.Path, err)
		}
		return Status{Code: 126}, nil
	}
	// What the line leaves running is this process's to end, where the
	// undo alone holds (see ends).
	var before map[int]bool
	if cfg.Protect != nil {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err == nil {
			defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		}
		before = childSet()
	}
	var start *starting
	var listener int
	for {
		start, err = forkExec(cfg.Path, cfg.Argv, cfg.Env, cfg.Dir, files, ignoredAtStart, r)
		if err == nil {
			if listener, err = start.listener(); err != nil {
				// The child ended before it was restricted: wait says why.
				if _, werr := start.wait(); werr != nil {
					err = werr
				}
			}
		}
		if err != nil && r.ns != nil && noNamespace(err) {
			// The kernel refused the namespace: the undo alone holds,
			// and Landlock keeps the secrets.
			if err = r.withoutNamespace(); err != nil {
				break
			}
			continue
		}
		break
	}
	if err != nil {
		return failed(err)
	}
	prevented := r.ns != nil && cfg.Protect != nil
	l, err := newLoop(listener, &cfg, writes)
	if err != nil {
		start.wait() // its execve fails: nobody answers it
		return failed(err)
	}
	go l.run()
	pid, err := start.wait()
	if err != nil {
		l.stop()
		return failed(err)
	}
	if prevented {
		// What the binds hold, as the program's namespace shows them:
		// the undo leaves those paths alone (a change there is not the
		// tree's, but the person's, or another session's).
		cfg.Protect.held(mountsOf(pid))
	}
	wait := func() Status {
		ws, err := waitPid(pid)
		switch {
		case err != nil:
			return Status{Code: 126}
		case ws.Signaled():
			return Status{Signal: int(ws.Signal())}
		}
		return Status{Code: ws.ExitStatus()}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				unix.Kill(pid, sig.(syscall.Signal))
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
	st.Prevented = prevented
	if cfg.Protect != nil && !prevented {
		// Nothing may write after the undo: what the line started ends
		// with it.
		st.Ended = endChildren(before, true)
	}
	l.stop()
	st.Refused = l.refusals()
	return st, nil
}

// ignoredAtStart are the signals (bit n-1) this process started
// ignoring, as its parent's shell would have its child start: those Go
// leaves ignored (SIGHUP, SIGINT), read before anything of the process's
// asks for them (signal.Notify). Go's runtime takes over every other
// signal before any package starts, and what it took over is not told.
var ignoredAtStart = func() uint64 {
	var m uint64
	for _, sig := range []syscall.Signal{unix.SIGHUP, unix.SIGINT} {
		if signal.Ignored(sig) {
			m |= sigBit(sig)
		}
	}
	return m
}()

func sigBit(sig syscall.Signal) uint64 { return 1 << (uint(sig) - 1) }

// waitPid waits for the child pid to end and reaps it. It waits in the
// runtime's poller on a pidfd, parked: a thread blocked in wait4 keeps
// the runtime's monitor waking every few milliseconds for as long as the
// program runs. Without pidfds it blocks in wait4.
func waitPid(pid int) (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	reap := func() (bool, error) {
		for {
			got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			switch {
			case err == unix.EINTR:
				continue
			case err != nil:
				return true, err
			}
			return got == pid, nil
		}
	}
	if fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK); err == nil {
		f := os.NewFile(uintptr(fd), "pidfd")
		defer f.Close()
		if rc, err := f.SyscallConn(); err == nil && f.SetReadDeadline(time.Time{}) == nil {
			var werr error
			err := rc.Read(func(uintptr) bool {
				done, err := reap()
				werr = err
				return done
			})
			if err == nil {
				return ws, werr
			}
		}
	}
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			return ws, err
		}
	}
}

// prepare makes what the program's process restricts itself with: the
// capabilities to drop and no_new_privs (unless the line is granted
// Privileged), the Landlock ruleset of the writable paths (resolved,
// returned), the seccomp filter.
func prepare(cfg *Config) (*restrictions, []string, error) {
	r := &restrictions{ruleset: -1}
	if cfg.Grant.Privileged {
		// The filter and the domain without no_new_privs need
		// CAP_SYS_ADMIN.
		if !hasCapability(unix.CAP_SYS_ADMIN) {
			return nil, nil, ErrPrivileged
		}
	} else {
		var err error
		if r.bounding, r.capHdr, r.capData, err = capDrops(); err != nil {
			return nil, nil, unavailable("%v", err)
		}
		r.noNewPrivs, r.dropCaps = true, true
	}
	var writes []string
	if cfg.Confine {
		var planted []string
		writes, planted = resolveWritable(cfg.writable())
		for _, p := range planted {
			if cfg.Report != nil {
				fmt.Fprintf(cfg.Report, "agent-shim: warning: the tree may not write %s: it is reached through a link in a directory the tree may write, which an earlier line may have made\n", p)
			}
		}
	}
	if namespaces {
		r.ns = nsPlanOf(cfg.Protect, cfg.Keep, cfg.secrets())
	}
	// The secrets are masked in the namespace; without one, Landlock
	// keeps them (see withoutNamespace).
	secrets := cfg.secrets()
	if r.ns != nil {
		secrets = nil
	}
	r.confine, r.writes, r.secrets = cfg.Confine, writes, cfg.secrets()
	var err error
	if r.ruleset, err = newRuleset(cfg.Confine, writes, secrets); err != nil {
		return nil, nil, unavailable("%v", err)
	}
	if r.filter, err = newFilter(cfg.Confine); err != nil {
		unix.Close(r.ruleset)
		return nil, nil, unavailable("%v", err)
	}
	return r, writes, nil
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
