package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// Test seams for the run-time layer.
var (
	// superviseRun runs a program under the supervisor.
	superviseRun = supervisor.Run
	// reraise dies of sig, as the supervised program did: the agent
	// sees what it would have seen had the program been exec'd. It
	// returns only when the signal does not kill.
	reraise = supervisor.Reraise
	// tempDirs are the temporary directories the tree may write in.
	tempDirs = func() []string { return []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"} }
)

// runCmd is `agent-shim run [--config FILE] -- PROGRAM [ARGS...]`: PROGRAM
// runs under the supervisor, every program it executes decided by the
// policy and its writes confined, as shell mode runs an allowed line.
func (e *env) runCmd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	configPath := fs.String("config", "", "the policy `file` (default: the agent's config.json)")
	if err := e.parseFlags(fs, "agent-shim run [--config FILE] -- PROGRAM [ARGS...]", args); err != nil {
		return e.exitCode(err)
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return e.exitCode(usagef("run: no program to run"))
	}
	path, err := exec.LookPath(argv[0])
	if err == nil {
		path, err = filepath.Abs(path)
	}
	if err != nil {
		return e.refuse(fmt.Errorf("finding %s: %w", argv[0], err))
	}
	s, err := e.open(ctx, openOptions{config: *configPath})
	if err != nil {
		return e.refuse(err)
	}
	s.close()
	return e.runProgram(ctx, s, &lazyConfig{path: s.config, g: s.g}, "run", path, argv, nil)
}

// runProgram runs an allowed program: under the supervisor when the
// run-time layer is on and available, else by exec, as agentShim.runtime
// says. agent names the front end in the decision log ("shell", "run");
// ap is what a person approved of the line that starts it (nil: nothing).
// It returns the program's status, 126 when it cannot run it.
func (e *env) runProgram(ctx context.Context, s *shim, cfg *lazyConfig, agent, path string, argv []string, ap *gate.Approval) int {
	f, err := cfg.load()
	if err != nil {
		return e.refuse(err)
	}
	mode := f.Shim.Runtime
	switch mode {
	case "", "on", "require":
	case "off":
		return e.execProgram(path, argv)
	default:
		return e.refuse(fmt.Errorf("%s: agentShim.runtime: unknown value %q (on, off, require)", cfg.path, mode))
	}
	if ap != nil {
		// What the person approved starts this program, so: it is
		// covered with its exact argv.
		ap.Path, ap.Argv = path, argv
	}
	snap, snapErr := supervisor.TakeSnapshot(e.checkouts(s.g))
	if snapErr != nil {
		return e.refuse(snapErr)
	}
	st, err := e.supervise(ctx, s, agent, path, argv, ap)
	if err == nil {
		if code := e.restoreProtected(s, snap, agent, ap); code != exitOK {
			if st.Signal == 0 && st.Code == 0 {
				st.Code = code
			}
		}
	}
	switch {
	case errors.Is(err, supervisor.ErrUnavailable) && mode == "require":
		return e.refuse(&hinted{fmt.Errorf("%v, and agentShim.runtime is \"require\"", err),
			"set agentShim.runtime to \"on\" in " + cfg.path + " to run without it"})
	case errors.Is(err, supervisor.ErrUnavailable):
		e.noteFallback(s, err)
		return e.runUnsupervised(s, snap, agent, path, argv, ap)
	case err != nil:
		return e.refuse(err)
	case st.Signal != 0:
		reraise(syscall.Signal(st.Signal))
	}
	return st.ExitCode()
}

// runUnsupervised runs an allowed program where the run-time layer is not
// available: its executions are not decided and its writes not confined,
// but the shim stays as its parent (runChild) so that its changes to the
// protected paths of the checkout are undone after it, as under the layer.
func (e *env) runUnsupervised(s *shim, snap *supervisor.Snapshot, agent, path string, argv []string, ap *gate.Approval) int {
	// Standard input that is not a file (only in tests: a process's is)
	// was handed to the supervisor's attempt already.
	var stdin io.Reader
	if f, ok := e.stdin.(*os.File); ok {
		stdin = f
	}
	st, err := runChild(path, argv, stdin, e.stdout, e.stderr)
	if err != nil {
		return e.refuse(fmt.Errorf("running %s: %w", path, err))
	}
	if code := e.restoreProtected(s, snap, agent, ap); code != exitOK && st.Signal == 0 && st.Code == 0 {
		st.Code = code
	}
	if st.Signal != 0 {
		reraise(syscall.Signal(st.Signal))
	}
	return st.ExitCode()
}

// runChild runs the program as a child with the shim's environment and
// streams and waits for it; the signals a shell's parent sends it (an
// interrupt, a hang-up, a terminal resize) go on to the child. A test
// replaces it.
var runChild = func(path string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (supervisor.Status, error) {
	cmd := &exec.Cmd{Path: path, Args: argv, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return supervisor.Status{}, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return supervisor.Status{Signal: int(ws.Signal())}, nil
		}
		return supervisor.Status{Code: ee.ExitCode()}, nil
	}
	return supervisor.Status{}, err
}

// execProgram replaces the process with the program. It returns only when
// it cannot (or a test's execShell returns).
func (e *env) execProgram(path string, argv []string) int {
	if err := execShell(path, argv, os.Environ()); err != nil {
		return e.refuse(fmt.Errorf("running %s: %w", path, err))
	}
	return exitOK
}

// supervise runs the program under the supervisor, deciding every
// execution with the shim's gate; refusals go to the decision log too.
func (e *env) supervise(ctx context.Context, s *shim, agent, path string, argv []string, ap *gate.Approval) (supervisor.Status, error) {
	g := s.g
	// The refusals and the tree's stderr share one writer.
	report := io.Writer(e.stderr)
	if _, ok := e.stderr.(*os.File); !ok {
		report = &lockedWriter{w: e.stderr}
	}
	stdin, doneIn := inFile(e.stdin)
	stdout, doneOut := outFile(e.stdout)
	stderr, doneErr := outFile(report)
	defer func() { doneIn(); doneOut(); doneErr() }()
	confine := g.Level() < gate.LevelFullAccess
	var writable []string
	if confine {
		writable = e.writable(g)
	}
	return superviseRun(ctx, supervisor.Config{
		Path: path, Argv: argv, Env: os.Environ(),
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
		Confine: confine, Writable: writable,
		Decide:   e.logExecs(s, agent, execDecider(g, ap)),
		Report:   report,
		Programs: restrictedPrograms(),
	})
}

// restrictedPrograms are the programs whose copies and hard links the
// run-time layer decides as them: those of the never-allow list and the
// ones that reach beyond the tree.
func restrictedPrograms() []string {
	names := []string{"git", "curl", "wget", "ssh", "scp", "sftp", "rsync", "sudo", "su", "doas", "pkexec",
		"docker", "podman", "kubectl", "tmux", "screen", "systemctl", "systemd-run", "gh", "nc", "ncat", "socat"}
	for _, l := range gate.NeverAllow() {
		if f := strings.Fields(l); len(f) > 0 && !slices.Contains(names, f[0]) {
			names = append(names, f[0])
		}
	}
	return names
}

// execDecider decides each execution with the gate (DecideExecution):
// ap, what a person approved, counts for the approved line's own
// commands only.
func execDecider(g *gate.Gate, ap *gate.Approval) func(supervisor.Exec) (supervisor.Verdict, gate.Decision) {
	return func(x supervisor.Exec) (supervisor.Verdict, gate.Decision) {
		d, refusal := g.DecideExecution(gate.Execution{
			Path: x.Path, Real: x.Real, Argv: x.Argv, Dir: x.Dir, Spellings: x.Spellings(), Env: x.Env,
		}, ap)
		return supervisor.Verdict{Allow: refusal == "", Reason: refusal}, d
	}
}

// writable is where the tree may write below full access: the scope (from
// local-changes up), the temporary directory, the user's cache directory,
// and the terminal and harmless devices.
func (e *env) writable(g *gate.Gate) []string {
	var out []string
	if g.Level() >= gate.LevelLocalChanges {
		out = append(out, g.Scope().Roots()...)
		for _, p := range g.Scope().Patterns() {
			if dir := e.patternPath(p); dir != "" {
				out = append(out, dir)
			}
		}
	}
	out = append(out, tempDirs()...)
	if c := e.cacheDir(); c != "" {
		out = append(out, filepath.Dir(c)) // the user cache directory, not only agent-shim's
	}
	return append(out, "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")
}

// patternPath is the path of a pathScope.allow pattern that Landlock can
// express: an exact path, or the top of a `dir/...` tree. Glob patterns
// cannot be expressed and are left out: the tree may not write there.
func (e *env) patternPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home := e.getenv("HOME")
		if home == "" {
			return ""
		}
		p = filepath.Join(home, rest)
	}
	p = strings.TrimSuffix(p, "/...")
	if !filepath.IsAbs(p) || strings.ContainsAny(p, "*?[{\\") {
		return ""
	}
	return filepath.Clean(p)
}

// noteFallback says once per session that the run-time layer is not
// active, and why.
func (e *env) noteFallback(s *shim, why error) {
	marker := strings.TrimSuffix(s.session.path, ".json") + ".runtime-off"
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err == nil {
		f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return // said already in this session
		}
		f.Close()
	}
	fmt.Fprintf(e.stderr, "agent-shim: note: running without the run-time layer (%v); only the command line was checked (changes to protected paths are still undone)\n", why)
}

// inFile returns r as a file the child can inherit: r itself when it is
// one, else a pipe fed from r.
func inFile(r io.Reader) (*os.File, func()) {
	if f, ok := r.(*os.File); ok {
		return f, func() {}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, func() {}
	}
	go func() {
		io.Copy(pw, r)
		pw.Close()
	}()
	return pr, func() { pr.Close() }
}

// outFile returns w as a file the child can inherit: w itself when it is
// one, else a pipe copied to w until the tree closes it, or for at most 2
// seconds after the program ended (a background process may hold it open:
// what it writes later is dropped).
func outFile(w io.Writer) (*os.File, func()) {
	if f, ok := w.(*os.File); ok {
		return f, func() {}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, func() {}
	}
	d := &detachable{w: w}
	done := make(chan struct{})
	go func() {
		io.Copy(d, pr)
		pr.Close()
		close(done)
	}()
	return pw, func() {
		pw.Close()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			d.detach()
		}
	}
}

// detachable writes to w until detached, then drops what it is given.
type detachable struct {
	mu sync.Mutex
	w  io.Writer
}

func (d *detachable) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w == nil {
		return len(p), nil
	}
	return d.w.Write(p)
}

func (d *detachable) detach() {
	d.mu.Lock()
	d.w = nil
	d.mu.Unlock()
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// checkouts are the tops of the checkouts a line may write: the scope's
// roots and the checkout of the working directory (the nearest directory
// above it with a .git), whose protected paths hold at run time.
func (e *env) checkouts(g *gate.Gate) []string {
	out := slices.Clone(g.Scope().Roots())
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				out = append(out, d)
				break
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return out
}

// restoreProtected undoes what the line changed of the protected paths of
// its checkouts, but for the writes a person approved with the line
// (ap.Keeps: the protected paths its commands write, exactly), and says
// so: one line each on stderr and in the decision log. It returns
// exitError when it undid or could not undo anything.
func (e *env) restoreProtected(s *shim, snap *supervisor.Snapshot, agent string, ap *gate.Approval) int {
	keep := ap.Keeps
	changed, err := snap.Restore(keep)
	if len(changed) == 0 && err == nil {
		return exitOK
	}
	w := e.decisionLog()
	for _, p := range changed {
		fmt.Fprintf(e.stderr, "agent-shim: denied at run time: the line changed %s, a protected path; undone\n", p)
		if w != nil {
			w.Log(entryOf(gate.Decision{Verdict: gate.Deny, Reason: "a protected path changed at run time; undone"}, decisionlog.Entry{
				Agent: agent, Layer: decisionlog.LayerRuntime, Tool: "write", Command: p,
			}))
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-shim: error: undoing the changes to protected paths: %s\n", oneLine(err.Error()))
	}
	return exitError
}
