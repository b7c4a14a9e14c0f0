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
	"github.com/agent-shim/agent-shim/shellparse"
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
	return e.runProgram(ctx, s, &lazyConfig{path: s.config, g: s.g}, "run", path, argv, false)
}

// runProgram runs an allowed program: under the supervisor when the
// run-time layer is on and available, else by exec, as agentShim.runtime
// says. agent names the front end in the decision log ("shell", "run");
// approved reports that a person approved what started it. It returns the
// program's status, 126 when it cannot run it.
func (e *env) runProgram(ctx context.Context, s *shim, cfg *lazyConfig, agent, path string, argv []string, approved bool) int {
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
	line := ""
	if agent == "shell" {
		line, _ = parseShellArgv(argv)
	}
	snap, snapErr := supervisor.TakeSnapshot(e.checkouts(s.g))
	if snapErr != nil {
		return e.refuse(snapErr)
	}
	st, err := e.supervise(ctx, s, agent, path, argv, approval{approved: approved, line: line})
	if err == nil {
		if code := e.restoreProtected(s, snap, agent, line, approved); code != exitOK {
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
		return e.runUnsupervised(s, snap, agent, line, path, argv, approved)
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
func (e *env) runUnsupervised(s *shim, snap *supervisor.Snapshot, agent, line, path string, argv []string, approved bool) int {
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
	if code := e.restoreProtected(s, snap, agent, line, approved); code != exitOK && st.Signal == 0 && st.Code == 0 {
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
func (e *env) supervise(ctx context.Context, s *shim, agent, path string, argv []string, ap approval) (supervisor.Status, error) {
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
	ap.path, ap.argv = path, argv
	if ap.approved && ap.line != "" {
		ap.cmds = lineCommands(g, ap.line)
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

// approval is what a person approved: the line that starts the tree (its
// program and argv, and for shell mode the command line), and so its
// own commands. What those run is decided as if nobody had approved
// anything: an approved `git commit` does not approve the `git push` a
// planted hook runs.
type approval struct {
	approved bool
	line     string
	path     string
	argv     []string
	cmds     [][]shellparse.Word // the line's commands, runners unwrapped
}

// lineCommands returns the commands of an approved line.
func lineCommands(g *gate.Gate, line string) [][]shellparse.Word {
	var out [][]shellparse.Word
	for _, c := range g.Explain(line).Commands {
		if c.Command != nil && len(c.Command.Args) > 0 {
			out = append(out, c.Command.Args)
		}
	}
	return out
}

// covers reports whether the approval covers the execution x: the line's
// program itself, or one of the line's commands, possibly behind runners
// (its words end x's argv; a word not known statically stands for any).
func (ap approval) covers(x supervisor.Exec) bool {
	if !ap.approved {
		return false
	}
	if x.Path == ap.path && slices.Equal(x.Argv, ap.argv) {
		return true
	}
	for _, cmd := range ap.cmds {
		for k := range x.Argv {
			if wordsMatch(cmd, x.Argv[k:], k == 0, x) {
				return true
			}
		}
	}
	return false
}

// wordsMatch reports whether argv is the command words; the program is
// compared by base name (for argv[0], also the file's own).
func wordsMatch(words []shellparse.Word, argv []string, first bool, x supervisor.Exec) bool {
	for i, w := range words {
		if !w.Static && w.Split {
			return true // any number of words from here on
		}
		if i == len(argv) {
			return false
		}
		switch {
		case !w.Static:
		case i == 0:
			b := filepath.Base(w.Text)
			if filepath.Base(argv[0]) != b && !(first && (filepath.Base(x.Path) == b || filepath.Base(x.Real) == b)) {
				return false
			}
		case w.Text != argv[i]:
			return false
		}
	}
	return len(words) == len(argv)
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

// execDecider decides each execution by every argv it may amount to; the
// strictest wins. Deny, and Ask without approval, refuse it, and so does
// an execution that loads code through the loader's variables, unless
// approved. The approval counts for the approved line's own commands
// only.
func execDecider(g *gate.Gate, ap approval) func(supervisor.Exec) (supervisor.Verdict, gate.Decision) {
	return func(x supervisor.Exec) (supervisor.Verdict, gate.Decision) {
		approved := ap.covers(x)
		if len(x.Env) > 0 && !approved {
			reason := "runs with " + strings.Join(x.Env, " ") + ", which loads code the program does not name"
			return supervisor.Verdict{Reason: reason + ", and nobody approved it"}, gate.Decision{Verdict: gate.Ask, Reason: reason}
		}
		var last gate.Decision
		for _, argv := range x.Spellings() {
			d := g.DecideExec(argv, x.Dir, approved)
			switch d.Verdict {
			case gate.Deny:
				return supervisor.Verdict{Reason: d.Reason}, d
			case gate.Ask:
				if ap.approved {
					return supervisor.Verdict{Reason: d.Reason + ", and the approval of the line covers its own commands only"}, d
				}
				return supervisor.Verdict{Reason: d.Reason + ", and nobody approved the line that runs it"}, d
			}
			last = d
		}
		return supervisor.Verdict{Allow: true}, last
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
// (gate's Protected: the line's commands that write them), and says so:
// one line each on stderr and in the decision log. It returns exitError
// when it undid or could not undo anything.
func (e *env) restoreProtected(s *shim, snap *supervisor.Snapshot, agent, line string, approved bool) int {
	var approvedWrites []string
	if approved && line != "" {
		for _, c := range s.g.Explain(line).Commands {
			if c.Protected != "" {
				approvedWrites = append(approvedWrites, c.Protected)
			}
		}
	}
	keep := func(p string) bool {
		for _, w := range approvedWrites {
			for _, top := range e.checkouts(s.g) {
				if rel, err := filepath.Rel(top, p); err == nil && !strings.HasPrefix(rel, "..") && strings.Contains(w, rel) {
					return true
				}
			}
		}
		return false
	}
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
