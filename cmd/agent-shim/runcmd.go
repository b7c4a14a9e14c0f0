package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/supervisor"
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
	return e.runProgram(ctx, s, &lazyConfig{path: s.config}, "run", path, argv, false)
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
	st, err := e.supervise(ctx, s, agent, path, argv, approved)
	switch {
	case errors.Is(err, supervisor.ErrUnavailable) && mode == "require":
		return e.refuse(&hinted{fmt.Errorf("%v, and agentShim.runtime is \"require\"", err),
			"set agentShim.runtime to \"on\" in " + cfg.path + " to run without it"})
	case errors.Is(err, supervisor.ErrUnavailable):
		e.noteFallback(s, err)
		return e.execProgram(path, argv)
	case err != nil:
		return e.refuse(err)
	case st.Signal != 0:
		reraise(syscall.Signal(st.Signal))
	}
	return st.ExitCode()
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
func (e *env) supervise(ctx context.Context, s *shim, agent, path string, argv []string, approved bool) (supervisor.Status, error) {
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
		Decide: e.logExecs(s, agent, execDecider(g, approved)),
		Report: report,
	})
}

// execDecider decides each execution by every argv it may amount to; the
// strictest wins. Deny, and Ask without approval, refuse it.
func execDecider(g *gate.Gate, approved bool) func(supervisor.Exec) (supervisor.Verdict, gate.Decision) {
	return func(x supervisor.Exec) (supervisor.Verdict, gate.Decision) {
		var last gate.Decision
		for _, argv := range x.Spellings() {
			d := g.DecideExec(argv, x.Dir, approved)
			switch d.Verdict {
			case gate.Deny:
				return supervisor.Verdict{Reason: d.Reason}, d
			case gate.Ask:
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
	fmt.Fprintf(e.stderr, "agent-shim: note: running without the run-time layer (%v); only the command line was checked\n", why)
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
