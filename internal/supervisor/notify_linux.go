//go:build linux && (amd64 || arm64)

package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
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
	refusedMu sync.Mutex
	refused   []Refusal
	listener  int
	file      *os.File // the listener in the runtime's poller: waiting costs no thread
	cfg       *Config
	sem       chan struct{}
	wg        sync.WaitGroup // run and the workers
	reportMu  sync.Mutex
	copies    *copies
	startEnv  map[string]bool // the tree's first environment, by NAME=value
	writes    []string        // Writable, resolved
	mem       *mem            // the memory of the process being answered
	// first: no notification came yet. The first can only be the
	// execve of the program Run starts: its process installs the filter
	// on itself just before (making none of the calls it watches after
	// it), and is the filter's only process until that execve succeeds.
	first bool
	// allowed are the executions allowed on this line, by key: one
	// that is the same in every field the decider reads is allowed
	// again without asking it (see Config.Decide). Refusals are asked
	// again, and reported, every time.
	allowed map[string]struct{}
}

// newLoop makes the loop of listener, which it owns from then on (closes
// on failure).
func newLoop(listener int, cfg *Config, writes []string) (*loop, error) {
	l := &loop{listener: listener, cfg: cfg, sem: make(chan struct{}, maxWorkers), startEnv: map[string]bool{}, mem: newMem(), first: true, allowed: map[string]struct{}{}, writes: writes}
	for _, kv := range cfg.Env {
		l.startEnv[kv] = true
	}
	if len(cfg.Programs) > 0 {
		l.copies = newCopies(cfg.Programs, cfg.Env)
	}
	// The loop waits in the runtime's poller (epoll), parked, not in a
	// blocking system call: a thread blocked in poll makes the runtime's
	// monitor wake every few milliseconds, and preempt the loop as a
	// goroutine that never yields.
	if err := unix.SetNonblock(listener, true); err != nil {
		unix.Close(listener)
		return nil, fmt.Errorf("preparing the seccomp listener: %w", err)
	}
	l.file = os.NewFile(uintptr(listener), "seccomp listener")
	if err := l.file.SetReadDeadline(time.Time{}); err != nil {
		l.file.Close()
		return nil, fmt.Errorf("polling the seccomp listener: %w", err)
	}
	// Wake the process on the CPU that answers (Linux 6.6): an exec
	// round trip costs less. Older kernels answer as well without.
	flags := uint64(unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, uintptr(unsafe.Pointer(&flags)))
	l.wg.Add(1)
	return l, nil
}

// resolveWritable resolves the writable paths as EvalSymlinks does,
// leaving out those it cannot resolve, but with one Lstat per directory
// of them all (they share /tmp, /dev, the checkout's parents). A path
// reached through a link that lies in a directory the tree may write
// (one of the others), to a directory it may not, is left out too, and
// returned in planted: an earlier line may have made that link
// (TMPDIR=/tmp/x, x replaced by a link to the home directory), and
// writing through it is not the person's grant.
func resolveWritable(ws []string) (out, planted []string) {
	real := realDirs{}
	var direct []string // the writable paths no link leads to
	for _, w := range ws {
		if c := filepath.Clean(w); filepath.IsAbs(w) && real.state(c) == dirReal {
			direct = append(direct, c)
		}
	}
	for _, w := range ws {
		if filepath.IsAbs(w) {
			switch c := filepath.Clean(w); real.state(c) {
			case dirReal: // there, no link on the way: itself
				out = append(out, c)
				continue
			case dirMissing: // EvalSymlinks fails
				continue
			}
		}
		r, err := filepath.EvalSymlinks(w)
		if err != nil {
			continue
		}
		if l := linkIn(w, direct); l != "" && !within(r, direct) {
			planted = append(planted, w+" (through "+l+")")
			continue
		}
		out = append(out, r)
	}
	return out, planted
}

// within reports whether p lies in (or is) one of dirs.
func within(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") || d == "/" {
			return true
		}
	}
	return false
}

// linkIn returns the first link on the way to p (absolute) that lies in
// one of the directories dirs (real paths), or "".
func linkIn(p string, dirs []string) string {
	if !filepath.IsAbs(p) {
		return ""
	}
	resolved, rest := "/", p
	for links := 0; rest != "" && links <= maxLinks; {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return ""
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if within(resolved, dirs) {
			return next
		}
		target, err := os.Readlink(next)
		if err != nil {
			return ""
		}
		links++
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = target + "/" + rest
	}
	return ""
}

// stop ends run, waits for the answers in flight and closes the listener:
// executions still to come fail with ENOSYS.
func (l *loop) stop() {
	l.file.SetReadDeadline(time.Now())
	l.wg.Wait()
	l.file.Close()
}

func (l *loop) run() {
	defer l.wg.Done()
	rc, err := l.file.SyscallConn()
	if err != nil {
		l.report("agent-shim: error: the run-time layer stopped: %v; executions will fail", err)
		return
	}
	var n seccompNotif
	var hup bool
	var errno unix.Errno
	// recv receives one notification, or says to wait for one.
	recv := func(fd uintptr) bool {
		for {
			pfd := unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
			var zero unix.Timespec
			k, _, err := syscall.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
			switch {
			case err == unix.EINTR:
				continue
			case err != 0:
				errno = err
				return true
			case k == 0:
				return false // nothing yet: wait in the poller
			case pfd.Revents&unix.POLLIN == 0:
				hup = true // POLLHUP: no process uses the filter any more
				return true
			}
			n = seccompNotif{}
			errno = rawIoctl(int(fd), unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n))
			if errno != unix.EINTR && errno != unix.ENOENT { // ENOENT: the process died before we got it
				return true
			}
		}
	}
	for {
		errno = 0
		if err := rc.Read(recv); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				l.report("agent-shim: error: the run-time layer stopped: %v; executions will fail", err)
			}
			return // stop
		}
		if hup {
			return
		}
		if errno != 0 {
			l.report("agent-shim: error: the run-time layer stopped: %v; executions will fail", errno)
			return
		}
		// Answered on this goroutine: a goroutine per notification
		// wakes another thread for each, which costs more than the
		// concurrency gains (a decision takes microseconds; the kernel
		// queues the notifications meanwhile).
		l.sem <- struct{}{}
		l.wg.Add(1)
		l.answer(&n)
	}
}

// answer decides one notification and answers the kernel: go on, or
// fail with an errno (EPERM when it is refused). When anything fails, the
// answer is EPERM.
func (l *loop) answer(n *seccompNotif) {
	defer func() { <-l.sem; l.wg.Done() }()
	resp := seccompNotifResp{id: n.id, error: -int32(unix.EPERM)}
	defer func() {
		if r := recover(); r != nil { // a decider that panics refuses
			l.refuse(Refusal{Kind: "unreadable", Reason: fmt.Sprintf("deciding an execution failed: %v", r)}, "agent-shim: denied at run time: an execution by pid %d: deciding it failed: %v", n.pid, r)
			resp = seccompNotifResp{id: n.id, error: -int32(unix.EPERM)}
			rawIoctl(l.listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		}
	}()
	var errno unix.Errno
	var gone bool
	first := l.first
	l.first = false
	switch nr := uint32(n.data.nr); {
	case first && nr != nrExecve:
		l.report("agent-shim: denied at run time: pid %d made system call %d before its program started", n.pid, nr)
		errno = unix.EPERM
	case first:
		errno, gone = l.answerStart(n)
	case nr == nrExecve || nr == nrExecveat:
		errno, gone = l.answerExec(n)
	case nr == nrConnect:
		errno, gone = l.answerConnect(n)
	case nr == nrIoctl:
		errno, gone = l.answerIoctl(n)
	default:
		errno, gone = l.answerMeta(n)
	}
	if gone {
		return
	}
	if errno == 0 {
		resp.error, resp.flags = 0, unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	} else {
		resp.error = -int32(errno)
	}
	// ENOENT: the process died meanwhile; nothing to answer.
	rawIoctl(l.listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// answerExec decides an execution: 0 lets it go on.
func (l *loop) answerExec(n *seccompNotif) (unix.Errno, bool) {
	m, done, err := l.openMem(n)
	if errors.Is(err, errGone) {
		return 0, true
	}
	if err != nil {
		l.refuse(Refusal{Kind: "unreadable", Reason: fmt.Sprintf("an execution that cannot be read: %v", err)}, "agent-shim: denied at run time: an execution by pid %d that cannot be read: %v", n.pid, err)
		return unix.EPERM, false
	}
	defer done()
	x, err := l.read(n, m)
	if err != nil && !errors.Is(err, errMissing) && !l.valid(n.id) {
		err = errGone // what failed was reading a process that is gone
	}
	switch {
	case errors.Is(err, errGone):
		return 0, true
	case errors.Is(err, errMissing):
		return unix.ENOENT, false // a PATH search: the kernel would say the same
	case err != nil:
		l.refuse(Refusal{Kind: "unreadable", Reason: fmt.Sprintf("an execution that cannot be read: %v", err)}, "agent-shim: denied at run time: an execution by pid %d that cannot be read: %v", n.pid, err)
		return unix.EPERM, false
	}
	if errno, gone := l.decide(x); errno != 0 || gone {
		return errno, gone
	}
	// The argv race: what was decided must still be what the kernel
	// is about to read (see the package doc for what remains).
	if err := l.reread(n, m); err != nil {
		if errors.Is(err, errGone) {
			return 0, true
		}
		l.refuse(Refusal{Kind: "exec", Path: x.Path, Argv: x.Argv, Reason: err.Error()}, "agent-shim: denied at run time: %s: %v", x, err)
		return unix.EPERM, false
	}
	return 0, false
}

// answerStart decides the execve of the program Run starts (see first).
// Its process is spawn's child, which runs in the supervisor's memory
// (on arm64, a copy of it): not dumpable, so not readable without
// CAP_SYS_PTRACE. What it executes is known instead of read: Config's
// Path, Argv, Env and Dir, resolved in the supervisor's root, which is
// the child's.
func (l *loop) answerStart(n *seccompNotif) (unix.Errno, bool) {
	c := l.cfg
	x := Exec{Pid: int(n.pid), Path: c.Path, rawPath: c.Path, Dir: c.Dir, Argv: c.Argv}
	if x.Dir == "" {
		var err error
		if x.Dir, err = os.Getwd(); err != nil {
			l.report("agent-shim: denied at run time: %s: reading the working directory: %v", c.Path, err)
			return unix.EPERM, false
		}
	}
	if !filepath.IsAbs(x.Path) {
		x.Path = filepath.Join(x.Dir, x.Path)
	}
	for _, kv := range c.Env {
		if l.loaderVar(kv) {
			x.Env = append(x.Env, kv)
		}
	}
	r := newResolver(os.Getpid())
	pr := r.probe(x.Path)
	if missing(pr.err) {
		return unix.ENOENT, false
	}
	if err := l.identifyProbed(r, &x, pr, 0); err != nil {
		l.refuse(Refusal{Kind: "exec", Path: x.Path, Argv: x.Argv, Reason: err.Error()}, "agent-shim: denied at run time: %s: %v", x, err)
		return unix.EPERM, false
	}
	if !l.valid(n.id) {
		return 0, true
	}
	return l.decide(x)
}

// decide asks the decider about x: 0 lets it go on.
func (l *loop) decide(x Exec) (unix.Errno, bool) {
	if l.cfg.Decide == nil {
		l.refuse(Refusal{Kind: "exec", Path: x.Path, Argv: x.Argv, Reason: "nothing decides executions"}, "agent-shim: denied at run time: %s: nothing decides executions", x)
		return unix.EPERM, false
	}
	key := x.key()
	if _, ok := l.allowed[key]; ok {
		return 0, false
	}
	if v := l.cfg.Decide(x); !v.Allow {
		l.refuse(Refusal{Kind: "exec", Path: x.Path, Argv: x.Argv, Reason: v.Reason}, "agent-shim: denied at run time: %s: %s", x, v.Reason)
		return unix.EPERM, false
	}
	if len(l.allowed) < maxAllowed {
		l.allowed[key] = struct{}{}
	}
	return 0, false
}

// refuse records r (Status.Refused) and reports the line format says.
func (l *loop) refuse(r Refusal, format string, args ...any) {
	l.refusedMu.Lock()
	if len(l.refused) < maxRefusals {
		l.refused = append(l.refused, r)
	}
	l.refusedMu.Unlock()
	l.report(format, args...)
}

// refusals are what the loop refused, in order.
func (l *loop) refusals() []Refusal {
	l.refusedMu.Lock()
	defer l.refusedMu.Unlock()
	return slices.Clone(l.refused)
}

// maxAllowed bounds the executions a line remembers as allowed.
const maxAllowed = 4096

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
	return rawIoctl(l.listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) == 0
}

// errMissing means the program to execute does not exist: the call
// fails with ENOENT without a decision.
var errMissing = errors.New("no such file")

// execArgs returns where an execve or execveat keeps its arguments.
func execArgs(n *seccompNotif) (dirfd int64, pathPtr, argvPtr, envPtr, flags uint64) {
	a := n.data.args
	if uint32(n.data.nr) == nrExecveat {
		return int64(int32(a[0])), a[1], a[2], a[3], a[4]
	}
	return unix.AT_FDCWD, a[0], a[1], a[2], 0
}

// openMem returns the memory of the process that made n, for reading
// (one at a time: the loop answers the notifications in turn). What is
// read is the process's only if n is still valid afterwards.
func (l *loop) openMem(n *seccompNotif) (*mem, func(), error) {
	l.mem.reset(int(n.pid))
	return l.mem, func() {}, nil
}

// read reads the execution a notification is about from the process's
// memory and resolves its program as the process sees it (its working
// directory, descriptors and /proc/self), checking before and after that
// the process is still the one waiting.
func (l *loop) read(n *seccompNotif, m *mem) (Exec, error) {
	x := Exec{Pid: int(n.pid)}
	dirfd, pathPtr, argvPtr, envPtr, flags := execArgs(n)
	// The pages of the path and of the argv and environment arrays, in
	// one call.
	m.fetch(pathPtr&^(pageSize-1), argvPtr&^(pageSize-1), envPtr&^(pageSize-1))
	path, err := m.string(pathPtr)
	if err != nil {
		return x, fmt.Errorf("reading the program's path: %w", err)
	}
	x.rawPath = path
	r := newResolver(x.Pid)
	cwd := func() error {
		if x.Dir != "" {
			return nil
		}
		var err error
		if x.Dir, err = readlink(r.proc + "/cwd"); err != nil {
			return fmt.Errorf("reading its working directory: %w", err)
		}
		return nil
	}
	var named string // the path to resolve, as the process means it
	switch {
	case path == "" && flags&unix.AT_EMPTY_PATH != 0:
		named = r.fd(dirfd) // fexecve: the file is the descriptor
		if dirfd == unix.AT_FDCWD {
			named = r.proc + "/cwd"
		}
		x.Path = named
	case path == "":
		return x, errors.New("runs an empty path")
	case filepath.IsAbs(path):
		named, x.Path = path, filepath.Clean(path)
	default:
		named = r.at(dirfd, path)
		if err := cwd(); err != nil {
			return x, err
		}
		x.Path = filepath.Join(x.Dir, path)
		if dirfd != unix.AT_FDCWD {
			base, err := readlink(r.fd(dirfd))
			if err != nil {
				return x, fmt.Errorf("reading execveat's directory: %w", err)
			}
			x.Path = filepath.Join(base, path)
		}
	}
	// A program that does not exist (the misses of a PATH search) is
	// answered before its arguments are read: the call fails with ENOENT,
	// as the kernel would fail it; nothing runs.
	pr := r.probe(named)
	if missing(pr.err) {
		return x, errMissing
	}
	if err := cwd(); err != nil {
		return x, err
	}
	if x.Argv, x.Env, err = m.argvEnv(argvPtr, envPtr, l.loaderVar); err != nil {
		return x, err
	}
	// Whether the process is still the one that waits is asked once,
	// after the second reading (reread): what was read from another
	// process (its pid reused) is never answered.
	return x, l.identifyProbed(r, &x, pr, 0)
}

// maxChain bounds the interpreters and loaders one execution goes
// through (Linux allows a script's interpreter to be a script 4 deep).
const maxChain = 8

// identify resolves the program named (Real), and tells what it is: a
// script and the execution of its interpreter, a copy of a restricted
// program, a dynamic loader and the program it loads; depth counts the
// interpreters and loaders before it.
func (l *loop) identify(r *resolver, x *Exec, named string, depth int) error {
	if depth > maxChain {
		return fmt.Errorf("%s: more than %d interpreters and loaders", x.Path, maxChain)
	}
	return l.identifyProbed(r, x, r.probe(named), depth)
}

// identifyProbed is identify once the program's file is found and read
// (pr).
func (l *loop) identifyProbed(r *resolver, x *Exec, pr probe, depth int) error {
	switch {
	case missing(pr.err):
		return errMissing
	case pr.err != nil:
		return fmt.Errorf("finding %s: %w", x.Path, pr.err)
	}
	real, st := pr.real, &pr.st
	x.Real, x.Interp, x.ID = real, pr.interp, FileID{Dev: uint64(st.Dev), Ino: st.Ino}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil // the kernel refuses it (EACCES)
	}
	if l.checkCopy(real, st) {
		x.Copies = l.copies.of(real, st)
	}
	if len(x.Interp) > 0 {
		// The kernel runs the interpreter with the script's path as
		// given to it: a copy of git as the interpreter of a script
		// named push is git push.
		script := x.rawPath
		if script == "" {
			script = x.Path
		}
		y := &Exec{Pid: x.Pid, Dir: x.Dir, Path: x.Interp[0], Env: x.Env,
			Argv: append(append(slices.Clone(x.Interp), script), x.Argv[min(1, len(x.Argv)):]...)}
		if !filepath.IsAbs(y.Path) {
			y.Path = filepath.Join(x.Dir, y.Path)
		}
		if err := l.identify(r, y, r.at(unix.AT_FDCWD, x.Interp[0]), depth+1); err != nil && !errors.Is(err, errMissing) {
			return err
		}
		x.Interpreted, x.Env = y, y.Env
		return nil
	}
	loader := isLoader(real)
	for _, c := range x.Copies {
		loader = loader || isLoader(c)
	}
	if !loader || len(x.Argv) < 2 {
		return nil
	}
	prog, args, env := loaderArgs(x.Argv)
	x.Env = append(x.Env, env...)
	if prog == "" {
		return nil
	}
	y := &Exec{Pid: x.Pid, Dir: x.Dir, Argv: append([]string{prog}, args...), Env: x.Env, Path: prog}
	if strings.Contains(prog, "/") {
		y.Path = filepath.Join(x.Dir, prog)
		if filepath.IsAbs(prog) {
			y.Path = filepath.Clean(prog)
		}
		if err := l.identify(r, y, r.at(unix.AT_FDCWD, prog), depth+1); err != nil && !errors.Is(err, errMissing) {
			return err
		}
	}
	x.Loaded, x.Env = y, y.Env // what a loader down the chain loads counts for all
	return nil
}

// checkCopy reports whether a file may be a copy of a restricted program
// the tree made: a file the tree may have written (inside the writable
// directories when writes are confined, else any file not owned by root,
// or any file at all when the tree runs as root).
func (l *loop) checkCopy(real string, st *unix.Stat_t) bool {
	if l.copies == nil {
		return false
	}
	if l.cfg.Confine {
		return l.writable(real)
	}
	return st.Uid != 0 || os.Geteuid() == 0
}

// loaderArgs reads a dynamic loader's command line (glibc's ld.so and
// musl's): the program it runs, its arguments, and the options that load
// other code, spelled as the variables that do the same.
func loaderArgs(argv []string) (prog string, args []string, env []string) {
	withArg := map[string]string{
		"--library-path": "LD_LIBRARY_PATH", "--preload": "LD_PRELOAD", "--audit": "LD_AUDIT",
		"--inhibit-rpath": "", "--argv0": "", "--glibc-hwcaps-prepend": "", "--glibc-hwcaps-mask": "",
	}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "--") {
			return a, argv[i+1:], env
		}
		name, val, eq := strings.Cut(a, "=")
		v, takes := withArg[name]
		switch {
		case takes && !eq:
			if i+1 == len(argv) {
				return "", nil, env
			}
			i++
			val = argv[i]
			fallthrough
		case takes:
			if v != "" {
				env = append(env, v+"="+val)
			}
		case a == "--":
			if i+1 < len(argv) {
				return argv[i+1], argv[i+2:], env
			}
			return "", nil, env
		}
	}
	return "", nil, env
}

// loaderVars are the variables that make the dynamic loader (or glibc)
// load code the program did not name.
var loaderVars = []string{"LD_PRELOAD=", "LD_AUDIT=", "LD_LIBRARY_PATH=", "GCONV_PATH=", "LD_ORIGIN_PATH=", "GLIBC_TUNABLES=", "LD_PROFILE=", "MALLOC_TRACE="}

// loaderVar reports whether kv sets a loader variable to something other
// than what the tree started with (the person's own environment).
func (l *loop) loaderVar(kv string) bool {
	if !strings.HasPrefix(kv, "LD_") && !strings.HasPrefix(kv, "G") && !strings.HasPrefix(kv, "M") {
		return false
	}
	for _, v := range loaderVars {
		if strings.HasPrefix(kv, v) {
			return len(kv) > len(v) && !l.startEnv[kv]
		}
	}
	return false
}

// reread reads again, after its decision, every byte the reading of an
// execution used (its path, argv and environment, and the arrays that
// point to them), and fails when one changed.
func (l *loop) reread(n *seccompNotif, m *mem) error {
	if !m.same() {
		return errors.New("its arguments changed while it was decided")
	}
	if !l.valid(n.id) {
		return errGone
	}
	return nil
}

// interpreter returns the #! line of a script, split as Linux splits it:
// the interpreter and at most one argument; nil for other files.
func interpreter(path string) []string {
	var st unix.Stat_t
	interp, _ := interpreterStat(path, &st)
	return interp
}

// interpreterStat is interpreter, which also stats the file into st (one
// open for both); the error is the stat's.
func interpreterStat(path string, st *unix.Stat_t) ([]string, error) {
	fd, err := rawOpen(path)
	if err != nil {
		if err := rawStat(path, st, true); err != nil {
			return nil, err
		}
		return nil, nil // a file that cannot be read (mode 0111) is no script we can read
	}
	defer rawClose(fd)
	return interpreterFd(fd, st)
}

// interpreterFd is interpreterStat of an open file.
func interpreterFd(fd int, st *unix.Stat_t) ([]string, error) {
	if err := rawFstat(fd, st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, nil
	}
	var b [256]byte // BINPRM_BUF_SIZE
	buf := b[:]
	n := rawRead(fd, buf)
	if n < 2 || buf[0] != '#' || buf[1] != '!' {
		return nil, nil
	}
	line := buf[2:n]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	s := strings.Trim(string(line), " \t")
	if s == "" {
		return nil, nil
	}
	interp, arg, _ := strings.Cut(s, " ")
	if i := strings.IndexByte(interp, '\t'); i >= 0 {
		interp, arg = interp[:i], interp[i+1:]+" "+arg
	}
	if arg = strings.Trim(arg, " \t"); arg != "" {
		return []string{interp, arg}, nil
	}
	return []string{interp}, nil
}
