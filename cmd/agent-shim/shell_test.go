package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// testEnv pins HOME and the XDG directories to a temporary directory and
// writes config.json there; it returns the directory and the config path.
func testEnv(t *testing.T, configJSON string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	for _, kv := range pinnedEnv(dir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("GEMINI_CONFIG_DIR", "")
	t.Setenv("GEMINI_HOME", "")
	cfg := filepath.Join(dir, "home", ".gemini", "config", "config.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if configJSON != "" {
		if err := os.WriteFile(cfg, []byte(configJSON), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, cfg
}

// seams replaces the exec and the terminal for one test; it records the
// exec calls.
type seams struct {
	mu    sync.Mutex
	execs [][]string // path, then argv
}

func useSeams(t *testing.T, tty func() (io.ReadWriteCloser, error)) *seams {
	s := &seams{}
	oldExec, oldTTY, oldRun, oldAvail := execShell, openTTY, superviseRun, layerAvailable
	t.Cleanup(func() { execShell, openTTY, superviseRun, layerAvailable = oldExec, oldTTY, oldRun, oldAvail })
	// Nothing runs under the supervisor here: the lines are read
	// statically, as without the run-time layer.
	layerAvailable = func() (bool, string) { return false, "the tests' exec seam" }
	execShell = func(path string, argv []string, _ []string) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.execs = append(s.execs, append([]string{path}, argv...))
		return nil
	}
	superviseRun = func(_ context.Context, c supervisor.Config) (supervisor.Status, error) {
		return supervisor.Status{}, execShell(c.Path, c.Argv, c.Env)
	}
	oldChild := runChild
	t.Cleanup(func() { runChild = oldChild })
	runChild = func(path string, argv []string, _ io.Reader, _, _ io.Writer) (supervisor.Status, error) {
		return supervisor.Status{}, execShell(path, argv, nil)
	}
	if tty == nil {
		tty = func() (io.ReadWriteCloser, error) { return nil, errors.New("no terminal") }
	}
	openTTY = tty
	return s
}

const shellConfig = `{"userSettings": {"globalPermissionGrants": {
  "allow": ["command(git status)"], "ask": ["command(git push)"], "deny": ["command(rm)"]}}}`

// The exec seam sees the real shell and the argv; nothing is exec'd.
func TestShellExecArgv(t *testing.T) {
	dir, _ := testEnv(t, shellConfig)
	fake := filepath.Join(dir, "fakesh")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENT_SHIM_SHELL", fake)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"agent-shim", "-c", "git status"}, []string{fake, "fakesh", "-c", "git status"}},
		{[]string{"/usr/bin/agent-shim", "-lc", "git status", "me", "a b"}, []string{fake, "fakesh", "-lc", "git status", "me", "a b"}},
		{[]string{"-agent-shim", "-c", "git status"}, []string{fake, "-fakesh", "-c", "git status"}}, // a login shell
		{[]string{"agent-shim", "-e", "-o", "pipefail", "-c", "git status"}, []string{fake, "fakesh", "-e", "-o", "pipefail", "-c", "git status"}},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.args)
		s := useSeams(t, nil)
		var stderr bytes.Buffer
		if code := run(context.Background(), tc.args, strings.NewReader(""), io.Discard, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		if diff := cmp.Diff([][]string{tc.want}, s.execs); diff != "" {
			t.Errorf("exec (-want +got):\n%s", diff)
		}
	}
	for _, cmd := range []string{"rm -rf /", "git push", "make", "git status; rm x"} {
		s := useSeams(t, nil)
		if code := run(context.Background(), []string{"agent-shim", "-c", cmd}, strings.NewReader(""), io.Discard, io.Discard); code != exitDenied {
			t.Errorf("%q: exit %d, want %d", cmd, code, exitDenied)
		}
		if len(s.execs) != 0 {
			t.Errorf("%q: exec'd %q", cmd, s.execs)
		}
	}
}

// answerer is a prompter that answers every request the same way.
type answerer struct {
	a    gate.Answer
	mu   sync.Mutex
	seen []gate.Request
}

func (p *answerer) AskApproval(_ context.Context, req gate.Request) (gate.Answer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, req)
	return p.a, nil
}

// Each answer through the prompter seam, and what a later process of the
// same session (a new gate) sees.
func TestShellAnswers(t *testing.T) {
	tests := []struct {
		answer     gate.Answer
		cmd, later string
		wantErr    error
		laterRuns  bool
	}{
		{answer: gate.AnswerNo, cmd: "git push a", later: "git push a", wantErr: gate.ErrDenied},
		{answer: gate.AnswerOnce, cmd: "git push b", later: "git push b"},
		{answer: gate.AnswerSession, cmd: "git push c", later: "git push c", laterRuns: true},
		{answer: gate.AnswerSession, cmd: "git push d", later: "git push dd"},
		{answer: gate.AnswerTool, cmd: "make e", later: "make ee", laterRuns: true},
		{answer: gate.AnswerAlways, cmd: "git push f", later: "git push f", laterRuns: true},
	}
	for i, tc := range tests {
		t.Logf("input: %v %q then %q", tc.answer, tc.cmd, tc.later)
		_, cfg := testEnv(t, shellConfig)
		t.Setenv("AGENT_SHIM_SESSION", fmt.Sprintf("answers-%d", i))
		e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv}
		ctx := context.Background()
		p := &answerer{a: tc.answer}
		s, err := e.open(ctx, openOptions{prompter: p})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.shellMode().Settle(ctx, s.c, p, tc.cmd, s.g.DecideBash(tc.cmd))
		s.close()
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
			t.Errorf("settle: %v, want %v", err, tc.wantErr)
		}
		if len(p.seen) != 1 {
			t.Errorf("asked %d times, want 1", len(p.seen))
		}
		// A new process of the session, with nobody to ask.
		s2, err := e.open(ctx, openOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.shellMode().Settle(ctx, s2.c, nil, tc.later, s2.g.DecideBash(tc.later))
		s2.close()
		if runs := err == nil; runs != tc.laterRuns {
			t.Errorf("later %q: %v, want runs=%v", tc.later, err, tc.laterRuns)
		}
		f, err := config.Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		persisted := slices.Contains(f.Shim.Tools.Allow, "bash:"+tc.cmd)
		if persisted != (tc.answer == gate.AnswerAlways) {
			t.Errorf("tools.allow = %q after %v", f.Shim.Tools.Allow, tc.answer)
		}
	}
}

// An "always" answer is persisted while 16 agents-setup runs rewrite the
// same config.json: every grant survives, and so do agents-setup's rules.
func TestAlwaysSurvivesAgentsSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agents-setup")
	}
	dir, cfg := testEnv(t, "")
	setup := buildBinary(t, dir, "agents-setup")
	ck := filepath.Join(dir, "ck")
	if err := os.MkdirAll(filepath.Join(ck, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	runSetup := func(args ...string) error {
		cmd := exec.Command(setup, append([]string{"--root", ck, "--config", cfg}, args...)...)
		cmd.Env = os.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("agents-setup %q: %v\n%s", args, err, out)
		}
		return nil
	}
	if err := runSetup("--init"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENT_SHIM_SESSION", "race")
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv}
	ctx := context.Background()
	profiles := []string{"read-only", "local-changes", "external-changes", "full-access"}
	const grants = 8
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	answered := make([]error, grants)
	for i := range 16 {
		wg.Go(func() { errs <- runSetup("-p", profiles[i%len(profiles)]) })
	}
	for i := range grants {
		wg.Go(func() {
			// A path outside the scope is asked at every level; the
			// person answers "always".
			p := &answerer{a: gate.AnswerAlways}
			s, err := e.open(ctx, openOptions{cwd: ck, prompter: p})
			if err != nil {
				answered[i] = err
				return
			}
			defer s.close()
			answered[i] = s.g.Check(ctx, "Read", fmt.Sprintf("/nonexistent/data-%d", i))
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	f, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// An answer waits for the lock at most sessions.ConfigWait: past it
	// the call does not run. Every call that ran has its grant kept.
	var saved []string
	for i, err := range answered {
		want := fmt.Sprintf("/nonexistent/data-%d", i)
		switch {
		case err == nil && !slices.Contains(f.Shim.PathScope.Allow, want):
			t.Errorf("%s ran, and its grant is lost; pathScope.allow = %q", want, f.Shim.PathScope.Allow)
		case err == nil:
			saved = append(saved, want)
		case !errors.Is(err, context.DeadlineExceeded):
			t.Errorf("%s: %v", want, err)
		default:
			t.Logf("%s not saved within the lock's bound, and refused: %v", want, err)
		}
	}
	if len(f.Shim.Rules) < 100 || len(f.Grants.Allow) == 0 {
		t.Errorf("agents-setup's rules lost: %d rules, %d allow grants", len(f.Shim.Rules), len(f.Grants.Allow))
	}
	// A later agents-setup run keeps the user's grants.
	if err := runSetup("-p", "read-only"); err != nil {
		t.Fatal(err)
	}
	if f, err = config.Load(cfg); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(f.Shim.PathScope.Allow))
	if diff := cmp.Diff(saved, got); diff != "" {
		t.Errorf("after agents-setup, pathScope.allow (-saved +got):\n%s", diff)
	}
}

// Shell mode with each agent's real wrapper, and with zsh as the real
// shell: what runs (the exec seam; nothing is exec'd) and what the
// decision log says, refusals included.
func TestShellWrappers(t *testing.T) {
	const cfgJSON = `{"userSettings": {"globalPermissionGrants": {
  "allow": ["command(git status)", "command(ls)", "command(cat)"], "ask": ["command(git push)"], "deny": ["command(rm)"]}}}`
	qlsE := `ls *(e:"rm -rf ~":)`
	tests := []struct {
		shell   string // the real shell's name: bash or zsh
		args    []string
		run     bool
		command string // the decision log's command
		verdict string
	}{
		{"bash", []string{"-c", "-l", claudeHead + "eval 'git status'" + claudeTail}, true, "git status", "allow"},
		{"bash", []string{"-c", claudeHead + "eval 'git status'" + claudeTail + "; rm -rf build"}, false, "", "deny"},
		{"bash", []string{"-c", claudeHead + "eval " + claudeQuote("rm -rf build") + claudeTail}, false, "rm -rf build", "deny"},
		{"bash", []string{"-c", claudeHead + "eval 'git push origin main'" + claudeTail}, false, "git push origin main", "ask"},
		{"bash", []string{"-c", codexHead + "'git status'"}, true, "git status", "allow"},
		{"bash", []string{"-c", strings.Replace(codexHead, "/bin/bash", "/usr/bin/zsh", 1) + claudeQuote(qlsE)}, false, qlsE, "ask"},
		{"bash", []string{"-c", geminiHead + "git status" + geminiTail}, true, "git status", "allow"},
		{"bash", []string{"-c", geminiHead + "ls\n)\nrm -rf build\n(\ntrue" + geminiTail}, false, "", "deny"},
		{"zsh", []string{"-c", qlsE}, false, qlsE, "ask"},
		{"zsh", []string{"-c", "echo *(+f)"}, false, "echo *(+f)", "ask"},
		{"zsh", []string{"-c", "cat =(rm -rf build)"}, false, "cat =(rm -rf build)", "deny"},
		{"zsh", []string{"-c", "ls -la && git status"}, true, "ls -la && git status", "allow"},
		{"zsh", []string{"-c", "source /home/u/.claude/shell-snapshots/snapshot-zsh-1-x.sh 2>/dev/null || true && " +
			`\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS 2>/dev/null || true && ` +
			"eval " + claudeQuote(qlsE) + claudeTail}, false, qlsE, "ask"},
		{"bash", []string{"-l", "script.sh"}, false, "-l script.sh", "deny"},
	}
	for i, tc := range tests {
		t.Logf("input: %s %q", tc.shell, tc.args)
		dir, _ := testEnv(t, cfgJSON)
		// The agents' directories of the wrapper texts; nothing is
		// written there.
		t.Setenv("CLAUDE_CONFIG_DIR", wHome+"/.claude")
		t.Setenv("CODEX_HOME", wHome+"/.codex")
		t.Setenv("TMPDIR", "/tmp")
		t.Setenv("CLAUDE_CODE_TMPDIR", "")
		t.Setenv("AGENT_SHIM_SESSION", fmt.Sprintf("wrappers-%d", i))
		bin := filepath.Join(dir, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		fake := filepath.Join(bin, tc.shell)
		if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AGENT_SHIM_SHELL", fake)
		s := useSeams(t, nil)
		var stderr bytes.Buffer
		code := run(context.Background(), append([]string{"agent-shim"}, tc.args...), strings.NewReader(""), io.Discard, &stderr)
		if ran := code == 0 && len(s.execs) == 1; ran != tc.run {
			t.Errorf("ran: %v (exit %d, execs %q, %s), want %v", ran, code, s.execs, stderr.String(), tc.run)
		}
		if tc.run && len(s.execs) == 1 && !slices.Equal(s.execs[0][2:], tc.args) {
			t.Errorf("the real shell got %q, want %q unchanged", s.execs[0][2:], tc.args)
		}
		if !tc.run && code != exitDenied {
			t.Errorf("exit %d, want %d", code, exitDenied)
		}
		entries, _, err := decisionlog.Read(filepath.Join(dir, "xdg", "state", "agent-shim", decisionlog.FileName), 0)
		if err != nil || len(entries) != 1 {
			t.Fatalf("decision log: %d entries, %v; want 1", len(entries), err)
		}
		want := tc.command
		if want == "" { // decided whole
			want = tc.args[len(tc.args)-1]
		}
		if got := entries[0]; got.Command != want || got.Verdict != tc.verdict || got.Layer != decisionlog.LayerShell {
			t.Errorf("logged %q %s (%s), want %q %s", got.Command, got.Verdict, got.Layer, want, tc.verdict)
		}
	}
}
