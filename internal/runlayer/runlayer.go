// Package runlayer runs the program of an allowed line: under the
// run-time layer (internal/supervisor) when it is on and available, every
// execution decided by the gate (gate.DecideExecution) and writes
// confined, else as a child or by exec, as agentShim.runtime says. After
// the program it undoes what the line changed of its checkouts' protected
// paths but for what a person approved (gate.Approval.Keeps), and says
// so. Shell mode and `agent-shim run` are its two front ends.
package runlayer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// ExitError is the status a run ends with when the line itself ran but
// its changes to protected paths had to be undone (or could not be).
const ExitError = 1

// Hinted is an error with a hint on how to get past it.
type Hinted struct {
	Err  error
	Hint string
}

func (h *Hinted) Error() string { return h.Err.Error() }
func (h *Hinted) Unwrap() error { return h.Err }

// Run is one program to run for a front end.
type Run struct {
	Gate *gate.Gate
	// Config is config.json's path; Mode its agentShim.runtime: "",
	// "on", "off" or "require".
	Config, Mode string
	// Secrets is its agentShim.secrets: paths the tree may not read
	// beyond the built-in list (absolute, or ~/…).
	Secrets []string
	// Agent names the front end in the decision log ("shell", "run");
	// Session the session.
	Agent, Session string
	// Marker is a file of the session's: made when the note that the
	// layer is unavailable was given, so that it is given once.
	Marker string
	// Approval is what a person approved of the line that starts the
	// program; nil: nothing.
	Approval *gate.Approval
	// Record, when set, is called as the program starts under the
	// supervisor; what it returns when the program ends, before
	// anything runs without the layer (agent-shim run records its
	// process for the agent's hook: tickets.Store.RecordRun).
	Record func() (done func())
	// TreeLog is a file the tree may append decision log lines to: its
	// hook's and shell mode's, which cannot write the log under the layer
	// (tickets.Store.RecordRun). TakeTreeLog takes them into Log.
	TreeLog string
	// State are the program's own directories (an agent's, under
	// agent-shim run): the tree writes them but for their guarded paths,
	// which are protected as a checkout's are. Made when missing.
	State []supervisor.Guarded
	// Layered says the line was allowed for the run-time layer to check
	// what the static reading could not see into (gate.Decision.Layered):
	// where the layer turns out unavailable, it does not run.
	Layered bool
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Getenv  func(string) string
	// Hint says how to allow a request for good, for config.json (the
	// hook's hint); nil says nothing.
	Hint func(config string, req *gate.Request) string
	// Log receives the run-time decisions and undone changes; nil logs
	// none.
	Log decisionlog.Logger
	// Now is the clock of the log's entries.
	Now func() time.Time

	// The front end's test seams (nil: the real ones).
	Supervise func(context.Context, supervisor.Config) (supervisor.Status, error)
	Reraise   func(syscall.Signal)
	TempDirs  func() []string
	Child     func(path string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (supervisor.Status, error)
	Exec      func(path string, argv, env []string) error
}

func (r *Run) defaults() {
	if r.Supervise == nil {
		r.Supervise = supervisor.Run
	}
	if r.Reraise == nil {
		r.Reraise = supervisor.Reraise
	}
	if r.TempDirs == nil {
		r.TempDirs = func() []string { return []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"} }
	}
	if r.Child == nil {
		r.Child = runChild
	}
	if r.Exec == nil {
		r.Exec = syscall.Exec
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Getenv == nil {
		r.Getenv = os.Getenv
	}
}

// Program runs the allowed program path with argv and returns its
// status; an error means it could not run it (the front end refuses,
// 126). Under the layer, or as a child where the layer is unavailable,
// the changes to protected paths are undone after it; with the layer off
// the process is replaced by the program.
func (r *Run) Program(ctx context.Context, path string, argv []string) (int, error) {
	r.defaults()
	if err := r.blocked(); err != nil {
		return 0, err
	}
	switch r.Mode {
	case "", "on", "require":
	case "off":
		return r.exec(path, argv)
	default:
		return 0, fmt.Errorf("%s: agentShim.runtime: unknown value %q (on, off, require)", r.Config, r.Mode)
	}
	if ap := r.Approval; ap != nil {
		// What the person approved starts this program: it is covered
		// with its exact argv.
		ap.Path, ap.Argv = path, argv
	}
	snap, err := supervisor.TakeSnapshot(r.checkouts(), r.state()...)
	if err != nil {
		return 0, err
	}
	done := func() {}
	if r.Record != nil {
		done = r.Record()
	}
	st, err := r.supervise(ctx, path, argv, snap)
	done()
	if err == nil {
		r.noteEnded(st)
		if code := r.restore(snap); code != 0 && st.Signal == 0 && st.Code == 0 {
			st.Code = code
		}
	}
	switch {
	case errors.Is(err, supervisor.ErrUnavailable) && r.Mode == "require":
		return 0, &Hinted{fmt.Errorf("%v, and agentShim.runtime is \"require\"", err),
			"set agentShim.runtime to \"on\" in " + r.Config + " to run without it"}
	case errors.Is(err, supervisor.ErrUnavailable) && r.Layered:
		// Allowed for the layer to check as it runs: without it, what
		// the static reading could not see into would run unchecked.
		return 0, &Hinted{fmt.Errorf("%w: the line was allowed for the run-time layer to check as it runs, and %v", gate.ErrNeedsApproval, err),
			"set agentShim.runtime to \"off\" in " + r.Config + " to have such lines asked instead"}
	case errors.Is(err, supervisor.ErrUnavailable):
		r.noteFallback(err)
		return r.unsupervised(snap, path, argv)
	case err != nil:
		return 0, err
	case st.Signal != 0:
		r.Reraise(syscall.Signal(st.Signal))
	}
	return st.ExitCode(), nil
}

// AgentState is the State of the agent a under agent-shim run: its own
// directories, guarded (agents.Agent.Guarded).
func AgentState(a *agents.Agent, getenv func(string) string) []supervisor.Guarded {
	var out []supervisor.Guarded
	for _, d := range a.StateDirs(getenv) {
		out = append(out, supervisor.Guarded{Dir: d, Paths: a.Guarded})
	}
	return out
}

// AgentOf is the agent whose program argv0 names as found on PATH
// (claude, codex, gemini), or nil: a program named by a path (./claude,
// a checkout's) is not taken for the agent.
func AgentOf(argv0 string) *agents.Agent {
	for _, a := range agents.All {
		if argv0 == a.Program {
			return a
		}
	}
	return nil
}

// maxTreeLog bounds what TakeTreeLog reads of the tree's log.
const maxTreeLog = 8 << 20

// TakeTreeLog takes the entries the tree wrote to TreeLog (its hook's,
// and shell mode's where the agent's shell is agent-shim) into Log, each
// marked as the tree's word (Entry.Tree): only hook and shell entries
// with a verdict, at most maxTreeLog bytes; a line that is not one is
// counted and said.
func (r *Run) TakeTreeLog() {
	if r.TreeLog == "" || r.Log == nil {
		return
	}
	f, err := os.OpenFile(r.TreeLog, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	}
	data, _ := io.ReadAll(io.LimitReader(f, maxTreeLog+1))
	skipped := 0
	if len(data) > maxTreeLog {
		data = data[:bytes.LastIndexByte(data[:maxTreeLog], '\n')+1]
		skipped++
	}
	for line := range bytes.Lines(data) {
		var e decisionlog.Entry
		if json.Unmarshal(line, &e) != nil || e.Layer != decisionlog.LayerHook && e.Layer != decisionlog.LayerShell || e.Verdict == "" {
			if len(bytes.TrimSpace(line)) > 0 {
				skipped++
			}
			continue
		}
		e.Tree, e.Lost = true, 0
		r.Log.Log(e)
	}
	if skipped > 0 {
		fmt.Fprintf(r.Stderr, "agent-shim: warning: %d line(s) of the tree's decision log under agent-shim run were not hook or shell-mode decisions, or past %d MiB, and were left out\n", skipped, maxTreeLog>>20)
	}
}

// state is r.State made where missing, each with the directory of the
// policy (Config) guarded too when it lies inside.
func (r *Run) state() []supervisor.Guarded {
	var out []supervisor.Guarded
	for _, g := range r.State {
		if err := os.MkdirAll(g.Dir, 0o700); err != nil {
			fmt.Fprintf(r.Stderr, "agent-shim: warning: making %s: %v\n", g.Dir, err)
			continue
		}
		if rel, err := filepath.Rel(resolved(g.Dir), resolved(filepath.Dir(r.Config))); err == nil && filepath.IsAbs(r.Config) && rel != ".." && !strings.HasPrefix(rel, "../") {
			if rel == "." {
				rel = filepath.Base(r.Config)
			} else {
				rel += "/"
			}
			g.Paths = append(slices.Clone(g.Paths), rel)
		}
		out = append(out, g)
	}
	return out
}

// resolved is p with its links resolved, or p where that fails.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// unsupervised runs an allowed program where the run-time layer is not
// available: its executions are not decided and its writes not confined,
// but this process stays as its parent so that its changes to the
// protected paths of the checkout are undone after it, as under the layer.
func (r *Run) unsupervised(snap *supervisor.Snapshot, path string, argv []string) (int, error) {
	// Standard input that is not a file (only in tests: a process's is)
	// was handed to the supervisor's attempt already.
	var stdin io.Reader
	if f, ok := r.Stdin.(*os.File); ok {
		stdin = f
	}
	// What the program leaves running ends with it: nothing of the line
	// may write after the undo.
	st, err := supervisor.EndingChildren(func() (supervisor.Status, error) {
		return r.Child(path, argv, stdin, r.Stdout, r.Stderr)
	})
	if err != nil {
		return 0, fmt.Errorf("running %s: %w", path, err)
	}
	r.noteEnded(st)
	if code := r.restore(snap); code != 0 && st.Signal == 0 && st.Code == 0 {
		st.Code = code
	}
	if st.Signal != 0 {
		r.Reraise(syscall.Signal(st.Signal))
	}
	return st.ExitCode(), nil
}

// runChild runs the program as a child with the shim's environment and
// streams and waits for it; the signals a shell's parent sends it (an
// interrupt, a hang-up, a terminal resize) go on to the child. A test
// replaces it.
func runChild(path string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (supervisor.Status, error) {
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

// exec replaces the process with the program. It returns only when it
// cannot (or a test's Exec returns).
func (r *Run) exec(path string, argv []string) (int, error) {
	if err := r.Exec(path, argv, os.Environ()); err != nil {
		return 0, fmt.Errorf("running %s: %w", path, err)
	}
	return 0, nil
}

// supervise runs the program under the supervisor, deciding every
// execution with the gate; refusals go to the decision log too.
func (r *Run) supervise(ctx context.Context, path string, argv []string, snap *supervisor.Snapshot) (supervisor.Status, error) {
	// The refusals and the tree's stderr share one writer.
	report := io.Writer(r.Stderr)
	if _, ok := r.Stderr.(*os.File); !ok {
		report = &lockedWriter{w: r.Stderr}
	}
	env, caches, err := r.treeEnv(os.Environ())
	if err != nil {
		return supervisor.Status{}, err
	}
	grant, withheld := r.grant()
	confine := r.Gate.Level() < gate.LevelFullAccess && !grant.Privileged
	var writable []string
	if confine {
		writable = r.Writable()
	}
	var seen refusedWrites
	stdin, doneIn := inFile(r.Stdin)
	stdout, stderr, doneOut := outFiles(r.Stdout, report, &seen)
	st, err := r.Supervise(ctx, supervisor.Config{
		Path: path, Argv: argv, Env: env,
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
		Confine: confine, Writable: writable,
		Decide:   r.LogExecs(r.hinted(Decider(r.Gate, r.Approval))),
		Report:   report,
		Programs: restrictedPrograms(),
		Grant:    grant,
		Secrets:  r.secrets(),
		Protect:  snap,
		Keep:     r.approvedWrites(),
	})
	doneIn()
	doneOut()
	if err == nil && st.ExitCode() != 0 {
		r.reportRefusals(st.Refused)
	}
	// A write to a protected path, read-only for the line, fails the
	// line as its undo would.
	if err == nil && st.Prevented && r.reportProtected(snap, seen.readOnlyWords()) && st.ExitCode() == 0 {
		st.Code = ExitError
	}
	if err == nil && confine && st.ExitCode() != 0 {
		r.reportRefused(seen.refused(append(writable, grant.Writable...)))
		r.reportWithheld(withheld)
	}
	r.trimCaches(caches)
	return st, privilegedRefusal(err)
}

// approvedWrites are the protected paths a person approved the line to
// write.
func (r *Run) approvedWrites() []string {
	if r.Approval == nil {
		return nil
	}
	return r.Approval.Writes
}

// noteEnded says that what the line left running was ended with it, and
// how to keep a server.
func (r *Run) noteEnded(st supervisor.Status) {
	if st.Ended == 0 {
		return
	}
	fmt.Fprintf(r.Stderr, "agent-shim: note: the line left %d process(es) running; they were ended with it: the protected paths could not be made read-only for the line here, so nothing of it may run after its changes to them are undone\n", st.Ended)
	fmt.Fprintf(r.Stderr, "agent-shim: hint: to keep a server running, start it as a line of its own in the foreground (agent-shim run -- npm run dev), or allow unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu)\n")
}

// secrets are what the tree may not read: the person's credential stores
// (supervisor.DefaultSecrets), the shim's own key, and agentShim.secrets.
func (r *Run) secrets() []string {
	out := supervisor.DefaultSecrets(r.Getenv)
	if p, err := approvals.Path(r.Getenv); err == nil {
		out = append(out, filepath.Join(filepath.Dir(p), "cache.key"))
	}
	for _, s := range r.Secrets {
		if rest, ok := strings.CutPrefix(s, "~/"); ok {
			if home := r.Getenv("HOME"); home != "" {
				out = append(out, filepath.Join(home, rest))
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// restrictedPrograms are the programs whose copies and hard links the
// run-time layer decides as them: those of the never-allow list and the
// ones that reach beyond the tree.
func restrictedPrograms() []string {
	names := []string{"git", "curl", "wget", "ssh", "scp", "sftp", "rsync", "sudo", "su", "doas", "pkexec",
		"docker", "podman", "kubectl", "tmux", "screen", "systemctl", "systemd-run", "gh", "nc", "ncat", "socat",
		"agent-shim", "agent-shim-bash", "agents-setup"}
	for _, l := range gate.NeverAllow() {
		if f := strings.Fields(l); len(f) > 0 && !slices.Contains(names, f[0]) {
			names = append(names, f[0])
		}
	}
	return names
}

// Decider decides each execution with the gate (DecideExecution): ap,
// what a person approved, counts for the approved line's own commands
// only.
func Decider(g *gate.Gate, ap *gate.Approval) func(supervisor.Exec) (supervisor.Verdict, gate.Decision) {
	return func(x supervisor.Exec) (supervisor.Verdict, gate.Decision) {
		d, refusal := g.DecideExecution(gate.Execution{
			Path: x.Path, Real: x.Real, Argv: x.Argv, Dir: x.Dir, Spellings: x.Spellings(), Env: x.Env,
		}, ap)
		return supervisor.Verdict{Allow: refusal == "", Reason: refusal}, d
	}
}

// hinted adds to the reason of an execution refused for want of a
// person's approval how to allow it for good, as the hook says it: the
// grant an "always" answer for that command would save (Hint), when that
// grant in config.json would let the execution run (it is tried on a gate
// of config.json with the grant added). A deny, and what no grant lifts
// (a protected path, running agent-shim), get none.
func (r *Run) hinted(decide func(supervisor.Exec) (supervisor.Verdict, gate.Decision)) func(supervisor.Exec) (supervisor.Verdict, gate.Decision) {
	if r.Hint == nil {
		return decide
	}
	return func(x supervisor.Exec) (supervisor.Verdict, gate.Decision) {
		v, d := decide(x)
		if v.Allow || d.Verdict == gate.Deny {
			return v, d
		}
		req := r.Gate.DecideBash(ArgvString(x.Argv)).Request
		if req == nil || req.Always.Tool == "" {
			return v, d
		}
		tools, err := gate.NewToolPolicy(x.Dir, []string{req.Always.Tool + ":" + req.Always.Pattern}, nil)
		if err != nil {
			return v, d
		}
		with, err := gate.Load(r.Config, gate.Options{Tools: tools, Scope: r.Gate.Scope(), Dir: x.Dir})
		if err != nil {
			return v, d
		}
		if _, refusal := with.DecideExecution(gate.Execution{Path: x.Path, Real: x.Real, Argv: x.Argv, Dir: x.Dir,
			Spellings: x.Spellings(), Env: x.Env}, r.Approval); refusal != "" {
			return v, d
		}
		if h := r.Hint(r.Config, req); h != "" {
			v.Reason += "; " + h
		}
		return v, d
	}
}

// LogExecs wraps the run-time layer's decider so that its decisions reach
// the decision log (layer runtime, tool execve): every refused execution,
// and the first allowed one of each program of the tree (a build runs the
// compiler thousands of times; logging each would rotate the hook's
// history away within minutes).
func (r *Run) LogExecs(decide func(supervisor.Exec) (supervisor.Verdict, gate.Decision)) func(supervisor.Exec) supervisor.Verdict {
	if r.Log == nil {
		return func(x supervisor.Exec) supervisor.Verdict { v, _ := decide(x); return v }
	}
	now := r.Now
	if now == nil {
		now = time.Now
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(x supervisor.Exec) supervisor.Verdict {
		v, d := decide(x)
		if v.Allow {
			mu.Lock()
			dup := seen[x.Path]
			seen[x.Path] = true
			mu.Unlock()
			if dup {
				return v
			}
		}
		r.Log.Log(d.Record(decisionlog.Entry{
			Time: now(), Agent: r.Agent, Session: r.Session, Layer: decisionlog.LayerRuntime,
			Cwd: x.Dir, Tool: "execve", Command: ArgvString(x.Argv), Argv: x.Argv,
		}))
		return v
	}
}

// ArgvString quotes argv back into a line, word by word.
func ArgvString(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		q, err := gate.QuoteArgv([]string{a})
		if err != nil {
			q = fmt.Sprintf("%q", a)
		}
		parts[i] = q
	}
	return strings.Join(parts, " ")
}

// Writable is where the tree may write below full access: the scope (from
// local-changes up), the temporary directory, the program's own
// directories (State), the tree's cache directory (package treecache),
// and the terminal and harmless devices.
func (r *Run) Writable() []string {
	r.defaults()
	g := r.Gate
	var out []string
	if g.Level() >= gate.LevelLocalChanges {
		out = append(out, g.Scope().Roots()...)
		for _, p := range g.Scope().Patterns() {
			if dir := r.patternPath(p); dir != "" {
				out = append(out, dir)
			}
		}
	}
	out = append(out, r.TempDirs()...)
	for _, g := range r.State {
		out = append(out, g.Dir) // but for its guarded paths (Program's snapshot)
	}
	if r.TreeLog != "" {
		out = append(out, r.TreeLog) // that file only: appended to, taken in after
	}
	if c := cacheRoot(r.Getenv); c != "" {
		out = append(out, c) // the tree's caches: the person's are read-only to it
	}
	return append(out, "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")
}

// patternPath is the path of a pathScope.allow pattern that Landlock can
// express: an exact path, or the top of a `dir/...` tree. Glob patterns
// cannot be expressed and are left out: the tree may not write there.
func (r *Run) patternPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home := r.Getenv("HOME")
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
func (r *Run) noteFallback(why error) {
	if r.Marker != "" {
		if err := os.MkdirAll(filepath.Dir(r.Marker), 0o700); err == nil {
			f, err := os.OpenFile(r.Marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return // said already in this session
			}
			f.Close()
		}
	}
	fmt.Fprintf(r.Stderr, "agent-shim: note: running without the run-time layer (%v); only the command line was checked (changes to protected paths are still undone)\n", why)
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
func (r *Run) checkouts() []string {
	out := slices.Clone(r.Gate.Scope().Roots())
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

// restore undoes what the line changed of the protected paths of its
// checkouts, but for the writes a person approved with the line
// (Approval.Keeps: the protected paths its commands write, exactly), and
// says so: one line each on stderr and in the decision log. It returns
// ExitError when it undid or could not undo anything.
func (r *Run) restore(snap *supervisor.Snapshot) int {
	changed, err := snap.Restore(r.Approval.Keeps)
	if len(changed) == 0 && err == nil {
		return 0
	}
	for _, p := range changed {
		fmt.Fprintf(r.Stderr, "agent-shim: denied at run time: the line changed %s, a protected path; undone\n", p)
		if r.Log != nil {
			r.Log.Log(gate.Decision{Verdict: gate.Deny, Reason: "a protected path changed at run time; undone"}.Record(decisionlog.Entry{
				Time: r.Now(), Agent: r.Agent, Layer: decisionlog.LayerRuntime, Tool: "write", Command: p,
			}))
		}
	}
	esc := oneLine
	var u *supervisor.UndoError
	switch {
	case errors.As(err, &u):
		for _, e := range u.Errs {
			fmt.Fprintf(r.Stderr, "agent-shim: error: undoing the changes to protected paths: %s\n", esc(e.Error()))
		}
		for _, p := range u.Aside {
			fmt.Fprintf(r.Stderr, "agent-shim: warning: a plant could not be removed, so it was renamed aside, where nothing runs it: %s\n", esc(p))
		}
		for _, p := range u.Moved {
			fmt.Fprintf(r.Stderr, "agent-shim: error: the line moved a protected directory: %s; what took its place was removed\n", esc(p))
		}
		if len(u.Live) > 0 {
			r.block(u.Live)
		}
	case err != nil:
		fmt.Fprintf(r.Stderr, "agent-shim: error: undoing the changes to protected paths: %s\n", esc(err.Error()))
	}
	return ExitError
}

// blockFile is where a plant the undo could neither remove nor put aside
// is recorded: while it exists, no line runs (Program refuses). It lies in
// the state directory, which the tree cannot write.
func (r *Run) blockFile() string {
	p, err := approvals.Path(r.Getenv)
	if err != nil {
		return ""
	}
	return filepath.Join(filepath.Dir(p), "blocked")
}

// block records the live plants and says how to remove them.
func (r *Run) block(live []string) {
	f := r.blockFile()
	if f != "" {
		os.MkdirAll(filepath.Dir(f), 0o700)
		os.WriteFile(f, []byte(strings.Join(live, "\n")+"\n"), 0o600)
	}
	for _, p := range live {
		q, _ := gate.QuoteArgv([]string{p})
		fmt.Fprintf(r.Stderr, "agent-shim: error: the line left %s, a protected path, in a state that can be neither undone nor put aside (an immutable file?); it would act as you\n", p)
		fmt.Fprintf(r.Stderr, "agent-shim: hint: remove it yourself (as root: chattr -i %s; rm -rf %s)\n", q, q)
	}
	if f != "" {
		q, _ := gate.QuoteArgv([]string{f})
		fmt.Fprintf(r.Stderr, "agent-shim: error: no further line runs until then; after, run: rm %s\n", q)
	}
}

// blocked is the refusal of every line while a plant is live (see block).
func (r *Run) blocked() error {
	f := r.blockFile()
	if f == "" {
		return nil
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return nil
	}
	q, _ := gate.QuoteArgv([]string{f})
	return &Hinted{fmt.Errorf("a line left a plant that could be neither undone nor put aside: %s", strings.TrimSpace(strings.ReplaceAll(string(data), "\n", ", "))),
		"remove it yourself, then run: rm " + q}
}
