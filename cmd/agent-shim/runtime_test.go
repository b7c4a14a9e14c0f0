package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/runlayer"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// runtimeConfig allows the harmless programs the tests run, denies
// `touch denied` and asks about `mkdir asked`.
const runtimeConfig = `{"userSettings": {"globalPermissionGrants": {
  "allow": ["command(bash)", "command(make)", "command(true)", "command(sleep)", "command(mkdir)"],
  "ask": ["command(mkdir asked)"],
  "deny": ["command(touch denied)"]}},
 "agentShim": {"version": 1, "profile": "%s", "rules": []}}`

// rt is a checkout in a temporary directory, with the run-time layer on.
type rt struct {
	dir, proj, outside string
}

// layerRequired says that the run-time layer must run here (CI sets
// AGENT_SHIM_TEST_LAYER=required): a test that would skip for want of the
// kernel's features, or of the tools its payload runs, fails instead.
var layerRequired = os.Getenv("AGENT_SHIM_TEST_LAYER") == "required"

// skipLacking skips a test for want of what the machine lacks, saying
// what; where the layer is required, it fails instead.
func skipLacking(t testing.TB, format string, args ...any) {
	t.Helper()
	if layerRequired {
		t.Fatalf("AGENT_SHIM_TEST_LAYER=required, but "+format, args...)
	}
	t.Skipf(format, args...)
}

// newRT pins HOME and XDG to a temporary directory, makes a checkout
// there and enters it; only dir/tmp counts as the temporary directory, so
// dir/outside is outside everything the tree may write. It skips when the
// kernel lacks the run-time layer.
func newRT(t *testing.T, profile string) *rt {
	t.Helper()
	return newRTConfig(t, fmt.Sprintf(runtimeConfig, profile))
}

// newRTConfig is newRT with a config.json of its own.
func newRTConfig(t *testing.T, configJSON string) *rt {
	t.Helper()
	if ok, why := supervisor.Available(); !ok {
		skipLacking(t, "the kernel lacks the run-time layer: %s", why)
	}
	dir, _ := testEnv(t, configJSON)
	// outside lies in the home directory: a temporary directory of its
	// own is what the layer lets lines write (tempDirs below), and the
	// gate reads no part of the home as temporary.
	r := &rt{dir: dir, proj: filepath.Join(dir, "proj"), outside: filepath.Join(dir, "home", "outside")}
	for _, d := range []string{filepath.Join(r.proj, ".git"), r.outside, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(r.proj)
	t.Setenv("AGENT_SHIM_SHELL", "/bin/bash")
	t.Setenv("AGENT_SHIM_SESSION", "rt-"+strings.NewReplacer("/", "-").Replace(t.Name()))
	t.Setenv("TMPDIR", filepath.Join(dir, "tmp"))
	t.Setenv("OUTSIDE", r.outside)
	oldTemp, oldRaise, oldTTY := tempDirs, reraise, openTTY
	t.Cleanup(func() { tempDirs, reraise, openTTY = oldTemp, oldRaise, oldTTY })
	tempDirs = func() []string { return []string{filepath.Join(dir, "tmp")} }
	reraise = func(syscall.Signal) {} // the exit code says which
	openTTY = func() (io.ReadWriteCloser, error) { return nil, os.ErrNotExist }
	return r
}

// file writes a file of the checkout.
func (r *rt) file(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.proj, name), []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func (r *rt) exists(name string) bool {
	_, err := os.Lstat(filepath.Join(r.proj, name))
	return err == nil
}

// shell runs `agent-shim -c line` in the process, as the agent would.
func shellRun(ctx context.Context, line string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(ctx, []string{"agent-shim", "-c", line}, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// A deny command run where the static check cannot see it (a script, a
// Makefile recipe, through sh -c, env, xargs, a renamed link, a false
// argv[0]) is refused when it executes: EPERM, one line naming the rule,
// and nothing happens. What runs beside it runs.
// (The Makefile recipes are TestRuntimeDenyMake's: make is not on a
// machine with Go and git only.)
func TestRuntimeDeny(t *testing.T) {
	runtimeDeny(t, []runtimeDenyCase{
		{"script", "touch denied"},
		{"sh-c", "sh -c 'touch denied'"},
		{"bash-c", "bash -c 'x=denied; touch $x'"},
		{"env", "env FOO=1 touch denied"},
		{"env-path", "env -i /usr/bin/touch denied"},
		{"xargs", "echo denied | xargs touch"},
		{"find", "find . -maxdepth 0 -exec touch denied ';'"},
		{"nested-script", "printf 'touch denied\\n' > in.sh; bash in.sh"},
		{"link", "ln -sf $(command -v touch) t2; ./t2 denied"},
		{"git-style-link", "ln -sf $(command -v touch) touch; PATH=.:$PATH; touch denied"},
		{"argv0", "(exec -a harmless touch denied)"},
		{"absolute", "/usr/bin/touch denied || /bin/touch denied"},
		{"eval", "eval \"$(printf 'touch %s' denied)\""},
	})
}

type runtimeDenyCase struct{ name, script string }

// runtimeDeny runs each case's script under shell mode in a checkout
// whose Makefile has recipes that run the denied command.
func runtimeDeny(t *testing.T, tests []runtimeDenyCase) {
	r := newRT(t, "local-changes")
	r.file(t, "Makefile", "all:\n\ttouch denied\nsh:\n\tsh -c 'touch denied'\nenv:\n\tenv FOO=1 touch denied\n")
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.script] {
			t.Fatalf("duplicate input %q", tc.script)
		}
		seen[tc.script] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Logf("input: %q", tc.script)
			os.Remove(filepath.Join(r.proj, "denied"))
			r.file(t, "payload.sh", tc.script+"\ntouch ran-"+tc.name+"\n")
			code, stdout, stderr := shellRun(context.Background(), "bash payload.sh")
			if r.exists("denied") {
				t.Errorf("the denied command ran (exit %d)\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "agent-shim: denied at run time: ") || !strings.Contains(stderr, "`command(touch denied)`") {
				t.Errorf("stderr does not name the rule:\n%s", stderr)
			}
			if !strings.Contains(stderr, "Operation not permitted") && !strings.Contains(stderr, "Error 127") && !strings.Contains(stderr, "exited with status") {
				t.Logf("stderr: %s", stderr)
			}
			if !r.exists("ran-" + tc.name) {
				t.Errorf("the script's allowed command did not run\nstderr: %s", stderr)
			}
		})
	}
}

// The never-allow list holds at run time too.
func TestRuntimeNeverAllow(t *testing.T) {
	r := newRT(t, "local-changes")
	// git push --force to a bare repository in the temporary directory:
	// harmless, and never allowed.
	if _, err := exec.LookPath("git"); err != nil {
		skipLacking(t, "no git")
	}
	bare := filepath.Join(r.dir, "tmp", "bare.git")
	r.file(t, "push.sh", "git -c init.defaultBranch=main init -q --bare "+bare+
		"\ngit push --force "+bare+" HEAD:main; echo status=$?\ntouch after\n")
	code, stdout, stderr := shellRun(context.Background(), "bash push.sh")
	if !strings.Contains(stderr, "denied at run time: ") || !strings.Contains(stderr, "never allowed") {
		t.Errorf("exit %d; stderr does not name the never-allow rule:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "status=126") && !strings.Contains(stdout, "status=1") {
		t.Logf("stdout: %s", stdout)
	}
	if !r.exists("after") {
		t.Errorf("the script stopped; stderr:\n%s", stderr)
	}
	// The refusal is on the record: layer runtime, the exact argv, the rule.
	path, err := decisionlog.Path(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	entries, _, err := decisionlog.Read(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, en := range entries {
		if en.Layer == decisionlog.LayerRuntime && en.Verdict == "deny" && strings.HasPrefix(en.Command, "git push --force ") && strings.Contains(en.Reason, "never allowed") {
			found = true
		}
	}
	if !found {
		t.Errorf("no runtime deny entry for git push --force in the decision log; entries: %+v", entries)
	}
}

// What the line runs that no rule denies runs: children, grandchildren,
// scripts.
func TestRuntimeAllowedChildren(t *testing.T) {
	r := newRT(t, "local-changes")
	r.file(t, "ok.sh", "touch one; sh -c 'touch two'; env touch three; echo four | xargs touch; bash -c 'mkdir -p five'\n")
	code, _, stderr := shellRun(context.Background(), "bash ok.sh")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"one", "two", "three", "four", "five"} {
		if !r.exists(f) {
			t.Errorf("%s was not made; stderr:\n%s", f, stderr)
		}
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
}

// An ask rule is refused at run time unless a person approved the line
// that started the tree: now (y), for the session (s), or always.
func TestRuntimeAsk(t *testing.T) {
	r := newRT(t, "local-changes")
	r.file(t, "ask.sh", "mkdir asked\n")
	code, _, stderr := shellRun(context.Background(), "bash ask.sh")
	if r.exists("asked") || !strings.Contains(stderr, "matches an ask rule: `command(mkdir asked)`, and nobody approved") {
		t.Errorf("not approved, but ran (exit %d):\n%s", code, stderr)
	}
	// The line itself asks; the person says y.
	tty := filepath.Join(r.dir, "tty-y")
	if err := os.WriteFile(tty, []byte("y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	openTTY = func() (io.ReadWriteCloser, error) { return openFakeTTY(tty) }
	code, _, stderr = shellRun(context.Background(), "mkdir asked")
	if code != 0 || !r.exists("asked") {
		t.Errorf("approved, but exit %d:\n%s", code, stderr)
	}
	// s: the same line later in the session runs without asking.
	os.Remove(filepath.Join(r.proj, "asked"))
	if err := os.WriteFile(tty, []byte("s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	line := "mkdir asked && bash ask.sh || true"
	if code, _, stderr = shellRun(context.Background(), line); code != 0 {
		t.Errorf("s: exit %d:\n%s", code, stderr)
	}
	os.Remove(filepath.Join(r.proj, "asked"))
	openTTY = func() (io.ReadWriteCloser, error) { return nil, os.ErrNotExist }
	code, _, stderr = shellRun(context.Background(), line)
	if code != 0 || !r.exists("asked") {
		t.Errorf("approved for the session, but exit %d:\n%s", code, stderr)
	}
}

// Writes are confined: below full access, to the scope, the temporary
// directory and the tree's caches; at read-only, to temp and the tree's
// caches only; at full access, anywhere the user may. Writes elsewhere,
// the person's own cache directory among them, fail with EACCES.
func TestRuntimeWrites(t *testing.T) {
	tests := []struct {
		profile                 string
		inside, temp, treeCache bool
		outside, personsCache   bool
	}{
		{profile: "read-only", temp: true, treeCache: true},
		{profile: "local-changes", inside: true, temp: true, treeCache: true},
		{profile: "external-changes", inside: true, temp: true, treeCache: true},
		{profile: "full-access", inside: true, temp: true, treeCache: true, outside: true, personsCache: true},
	}
	for _, tc := range tests {
		t.Run(tc.profile, func(t *testing.T) {
			r := newRT(t, tc.profile)
			cache := filepath.Join(r.dir, "xdg", "cache")
			if err := os.MkdirAll(cache, 0o755); err != nil {
				t.Fatal(err)
			}
			targets := map[string]bool{
				filepath.Join(r.proj, "inside"):              tc.inside,
				filepath.Join(r.dir, "tmp", "temp"):          tc.temp,
				filepath.Join(cache, "c"):                    tc.personsCache,
				filepath.Join(cache, "agent-shim-tree", "c"): tc.treeCache,
				filepath.Join(r.outside, "out"):              tc.outside,
				filepath.Join(r.dir, "home", ".bashrc"):      tc.outside,
			}
			var script strings.Builder
			for p := range targets {
				fmt.Fprintf(&script, "echo x > %q\n", p)
			}
			script.WriteString("echo ok > /dev/null\n")
			r.file(t, "w.sh", script.String())
			_, _, stderr := shellRun(context.Background(), "bash w.sh")
			for p, want := range targets {
				_, err := os.Stat(p)
				if got := err == nil; got != want {
					t.Errorf("%s: written=%v, want %v\nstderr: %s", p, got, want, stderr)
				}
				if !want && !strings.Contains(stderr, p+": Permission denied") {
					t.Errorf("%s: no EACCES in stderr:\n%s", p, stderr)
				}
			}
		})
	}
}

// Exit codes and deaths by signal pass through as exec would pass them.
func TestRuntimeStatus(t *testing.T) {
	r := newRT(t, "local-changes")
	var raised []syscall.Signal
	reraise = func(s syscall.Signal) { raised = append(raised, s) }
	tests := []struct {
		script string
		want   int
		signal syscall.Signal
	}{
		{"exit 7", 7, 0},
		{"true", 0, 0},
		{"kill -TERM $$", 128 + 15, syscall.SIGTERM},
		{"kill -KILL $$", 128 + 9, syscall.SIGKILL},
		{"sleep 5 >/dev/null 2>&1 & kill -KILL $$", 128 + 9, syscall.SIGKILL},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.script)
		raised = nil
		r.file(t, "st.sh", tc.script+"\n")
		code, _, stderr := shellRun(context.Background(), "bash st.sh")
		if code != tc.want {
			t.Errorf("%q: exit %d, want %d\n%s", tc.script, code, tc.want, stderr)
		}
		if tc.signal != 0 && (len(raised) != 1 || raised[0] != tc.signal) {
			t.Errorf("%q: raised %v, want %v", tc.script, raised, tc.signal)
		}
	}
}

// A signal sent to the supervisor reaches the program, as it would have
// reached the exec'd shell.
func TestRuntimeSignalForwarded(t *testing.T) {
	r := newRT(t, "local-changes")
	r.file(t, "trap.sh", "trap 'touch got-term; exit 3' TERM\ntouch ready\nwhile :; do sleep 0.05; done\n")
	done := make(chan int)
	go func() {
		code, _, _ := shellRun(context.Background(), "bash trap.sh")
		done <- code
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !r.exists("ready") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM) // the supervisor is this process
	select {
	case code := <-done:
		if code != 3 || !r.exists("got-term") {
			t.Errorf("exit %d, trap ran: %v", code, r.exists("got-term"))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the program did not get SIGTERM")
	}
}

// 500 parallel executions of an allowed program do not wedge the
// supervisor, and a denied one among them is still refused.
func TestRuntimeForkBomb(t *testing.T) {
	r := newRT(t, "local-changes")
	r.file(t, "bomb.sh", "for i in $(seq 500); do /bin/true & done; touch denied & wait; touch bomb-done\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	code, _, stderr := shellRun(ctx, "bash bomb.sh")
	t.Logf("500 parallel execs: %v", time.Since(start))
	if code != 0 || !r.exists("bomb-done") {
		t.Errorf("exit %d, done=%v\n%s", code, r.exists("bomb-done"), stderr)
	}
	if r.exists("denied") {
		t.Error("the denied command ran")
	}
}

// 16 lines run at once, each under its own supervisor.
func TestRuntimeConcurrentLines(t *testing.T) {
	r := newRT(t, "local-changes")
	r.file(t, "c.sh", "touch ok-$1; sh -c 'touch denied'; exit $(( $1 % 5 ))\n")
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 16 {
		wg.Go(func() {
			code, _, stderr := shellRun(context.Background(), fmt.Sprintf("bash c.sh %d", i))
			if code != i%5 || !strings.Contains(stderr, "denied at run time") {
				errs <- fmt.Sprintf("line %d: exit %d\n%s", i, code, stderr)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for i := range 16 {
		if !r.exists(fmt.Sprintf("ok-%d", i)) {
			t.Errorf("line %d did not run", i)
		}
	}
	if r.exists("denied") {
		t.Error("a denied command ran")
	}
}

// agentShim.runtime: off runs by exec; an unknown value refuses. (On a
// kernel without the layer, require refuses and on falls back: see
// TestRuntimeFallback.)
func TestRuntimeSetting(t *testing.T) {
	r := newRT(t, "local-changes")
	cfg := filepath.Join(r.dir, "home", ".gemini", "config", "config.json")
	set := func(v string) {
		data := strings.Replace(fmt.Sprintf(runtimeConfig, "local-changes"), `"rules": []`, `"rules": [], "runtime": "`+v+`"`, 1)
		if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := useSeams(t, nil)
	set("off")
	if code, _, stderr := shellRun(context.Background(), "bash x.sh"); code != 0 || len(s.execs) != 1 {
		t.Errorf("off: exit %d, execs %q\n%s", code, s.execs, stderr)
	}
	set("sometimes")
	if code, _, stderr := shellRun(context.Background(), "bash x.sh"); code != exitDenied || !strings.Contains(stderr, `agentShim.runtime: unknown value "sometimes"`) {
		t.Errorf("unknown: exit %d\n%s", code, stderr)
	}
}

// Where the kernel lacks the layer, on falls back to exec and says so once
// per session; require refuses.
func TestRuntimeFallback(t *testing.T) {
	r := newRT(t, "local-changes")
	cfg := filepath.Join(r.dir, "home", ".gemini", "config", "config.json")
	s := useSeams(t, nil)
	superviseRun = func(context.Context, supervisor.Config) (supervisor.Status, error) {
		return supervisor.Status{}, fmt.Errorf("%w: no seccomp here", supervisor.ErrUnavailable)
	}
	for i, want := range []string{"agent-shim: note: running without the run-time layer (run-time layer unavailable: no seccomp here); only the command line was checked (changes to protected paths are still undone)\n", ""} {
		code, _, stderr := shellRun(context.Background(), "bash x.sh")
		if code != 0 || stderr != want || len(s.execs) != i+1 {
			t.Errorf("on, call %d: exit %d, execs %d, stderr %q, want %q", i, code, len(s.execs), stderr, want)
		}
	}
	data := strings.Replace(fmt.Sprintf(runtimeConfig, "local-changes"), `"rules": []`, `"rules": [], "runtime": "require"`, 1)
	if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := shellRun(context.Background(), "bash x.sh")
	if code != exitDenied || !strings.Contains(stderr, `agentShim.runtime is "require"`) || len(s.execs) != 2 {
		t.Errorf("require: exit %d, execs %d\n%s", code, len(s.execs), stderr)
	}
}

// Where the layer is unavailable the program runs as the shim's child,
// unsupervised, and what it changed of the protected paths is undone all
// the same; its status passes through.
func TestRuntimeFallbackProtectedPaths(t *testing.T) {
	r, _ := gitRT(t, "local-changes")
	child := runChild
	useSeams(t, nil)
	runChild = child // a real child: only the supervisor is missing
	superviseRun = func(context.Context, supervisor.Config) (supervisor.Status, error) {
		return supervisor.Status{}, fmt.Errorf("%w: no seccomp here", supervisor.ErrUnavailable)
	}
	config, _ := os.ReadFile(filepath.Join(r.proj, ".git", "config"))
	r.file(t, "plant.sh", `printf '[core]\n\tfsmonitor = touch pwned\n' >> .git/config
printf '#!/bin/sh\ntouch pwned\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout
echo ok > src.txt
`)
	code, _, stderr := shellRun(context.Background(), "bash plant.sh")
	if code == 0 || !strings.Contains(stderr, filepath.Join(r.proj, ".git/hooks/post-checkout")+", a protected path; undone") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(r.proj, ".git", "config")); !bytes.Equal(got, config) {
		t.Errorf(".git/config not restored:\n%s", got)
	}
	if r.exists(".git/hooks/post-checkout") {
		t.Error("the planted hook stayed")
	}
	if !r.exists("src.txt") {
		t.Error("the line did not run, or an unprotected file was undone")
	}
	r.file(t, "four.sh", "echo out; exit 4\n")
	if code, stdout, stderr := shellRun(context.Background(), "bash four.sh"); code != 4 || stdout != "out\n" {
		t.Errorf("status: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	// agent-shim run goes the same way.
	var out, errb bytes.Buffer
	code = run(context.Background(), []string{"agent-shim", "run", "--", "bash", "plant.sh"}, strings.NewReader(""), &out, &errb)
	if code == 0 || r.exists(".git/hooks/post-checkout") {
		t.Errorf("agent-shim run: exit %d, planted hook there: %v\n%s", code, r.exists(".git/hooks/post-checkout"), errb.String())
	}
}

// agent-shim run wraps any program: its executions are decided, its
// status passes through.
func TestRunCommand(t *testing.T) {
	r := newRT(t, "local-changes")
	r.file(t, "job.sh", "touch job-ran; touch denied; exit 4\n")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"agent-shim", "run", "--", "bash", "job.sh"}, strings.NewReader(""), &out, &errb)
	if code != 4 || !r.exists("job-ran") || r.exists("denied") || !strings.Contains(errb.String(), "denied at run time") {
		t.Errorf("exit %d, ran %v, denied %v\n%s", code, r.exists("job-ran"), r.exists("denied"), errb.String())
	}
	// The refusal is in the decision log.
	logPath, err := decisionlog.Path(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(logPath)
	for _, want := range []string{`"agent":"run"`, `"layer":"runtime"`, `"tool":"execve"`, `"verdict":"deny"`, `"text":"command(touch denied)"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("decision log has no %s:\n%s", want, data)
		}
	}
	// The program itself is decided too.
	errb.Reset()
	code = run(context.Background(), []string{"agent-shim", "run", "--", "touch", "denied"}, strings.NewReader(""), &out, &errb)
	if code != exitDenied || r.exists("denied") {
		t.Errorf("exit %d\n%s", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"agent-shim", "run"}, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("no program: exit %d\n%s", code, errb.String())
	}
}

// BenchmarkExecDecision is the decision of one execution at run time,
// with the policy of the full Fuchsia size: every argv it may amount to,
// decided by the gate (the memory reads are not included).
func BenchmarkExecDecision(b *testing.B) {
	dir := b.TempDir()
	pinned := pinnedEnv(dir)
	for _, kv := range pinned {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	cfg := fuchsiaConfig(b, dir, pinned)
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv}
	s, err := e.open(context.Background(), openOptions{config: cfg, cwd: filepath.Join(dir, "ck")})
	if err != nil {
		b.Fatal(err)
	}
	s.close()
	decide := runlayer.Decider(s.g, nil)
	execs := []supervisor.Exec{
		{Path: "/usr/bin/git", Real: "/usr/bin/git", Argv: []string{"git", "status", "--porcelain"}, Dir: dir},
		{Path: "/bin/true", Real: "/usr/bin/true", Argv: []string{"/bin/true"}, Dir: dir},
		{Path: "/usr/bin/make", Real: "/usr/bin/make", Argv: []string{"make", "-C", "out", "-j8", "all"}, Dir: dir},
		{Path: filepath.Join(dir, "ck", "build.sh"), Argv: []string{"./build.sh", "--fast"}, Dir: filepath.Join(dir, "ck"), Interp: []string{"/usr/bin/env", "bash"}},
		{Path: "/usr/bin/git", Real: "/usr/bin/git", Argv: []string{"git", "push", "--force", "origin", "main"}, Dir: dir},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		decide(execs[i%len(execs)])
	}
}

// gitConfig allows git and bash, asks for git commit and git push (the
// never-allow list denies the force pushes).
const gitConfig = `{"userSettings": {"globalPermissionGrants": {
  "allow": ["command(bash)", "command(git)", "command(true)", "command(cp)", "command(chmod)", "command(mv)", "command(mkdir)"],
  "ask": ["command(git commit)", "command(git push)"],
  "deny": []}},
 "agentShim": {"version": 1, "profile": "%s", "rules": []}}`

// gitRT is a checkout with one commit, and a bare repository in the
// temporary directory to push to: harmless.
func gitRT(t *testing.T, profile string) (*rt, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		skipLacking(t, "no git")
	}
	r := newRTConfig(t, fmt.Sprintf(gitConfig, profile))
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
	bare := filepath.Join(r.dir, "tmp", "bare.git")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", r.proj}, {"init", "-q", "--bare", "-b", "main", bare},
		{"-C", r.proj, "commit", "-q", "--allow-empty", "-m", "one"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return r, bare
}

// pushed reports whether the bare repository got a branch.
func pushed(t *testing.T, bare string) bool {
	t.Helper()
	out, _ := exec.Command("git", "-C", bare, "for-each-ref").CombinedOutput()
	return len(bytes.TrimSpace(out)) > 0
}

// A force push is decided as git however the program is named: by a
// descriptor (/proc/self/fd, /dev/fd), through the dynamic loader, as a
// copy or hard link of git; an allowed git status with LD_PRELOAD set is
// refused (it would load code into git); a memfd cannot run at all.
func TestRuntimeExecIdentity(t *testing.T) {
	r, bare := gitRT(t, "local-changes")
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	git, _ = filepath.EvalSymlinks(git)
	push := " push -q --force " + bare + " HEAD:main"
	tests := []struct{ name, script, want string }{
		{"proc-self-fd", "exec 3<" + git + "; /proc/self/fd/3" + push, "never allowed"},
		{"dev-fd", "exec 3<" + git + "; /dev/fd/3" + push, "never allowed"},
		{"copy", "cp " + git + " ./notgit; ./notgit" + push, "never allowed"},
		{"hard-link", "ln " + git + " ./g2 2>/dev/null || cp " + git + " ./g2; ./g2" + push, "never allowed"},
		{"preload", "LD_PRELOAD=/nonexistent.so git status", "LD_PRELOAD=/nonexistent.so"},
		{"library-path", "LD_LIBRARY_PATH=. git status", "LD_LIBRARY_PATH=."},
	}
	loaders, _ := filepath.Glob("/lib*/ld-linux*.so*")
	for _, l := range loaders {
		tests = append(tests,
			struct{ name, script, want string }{"loader-" + filepath.Base(l), l + " " + git + push, "never allowed"},
			struct{ name, script, want string }{"loader-preload-" + filepath.Base(l), l + " --preload /nonexistent.so " + git + " status", "LD_PRELOAD=/nonexistent.so"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Logf("input: %q", tc.script)
			r.file(t, "id.sh", tc.script+"\ntouch after\n")
			os.Remove(filepath.Join(r.proj, "after"))
			code, _, stderr := shellRun(context.Background(), "bash id.sh")
			if pushed(t, bare) {
				t.Fatalf("the force push ran (exit %d):\n%s", code, stderr)
			}
			if !strings.Contains(stderr, "denied at run time") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d; stderr does not say %q:\n%s", code, tc.want, stderr)
			}
			if !r.exists("after") {
				t.Errorf("the script stopped:\n%s", stderr)
			}
		})
	}
}

// An approval covers the approved line's own commands: after the person
// approves git commit, the pre-commit hook planted earlier cannot push
// (an ask rule) unasked; the refusal names the push.
func TestRuntimeApprovalScope(t *testing.T) {
	r, bare := gitRT(t, "local-changes")
	hook := filepath.Join(r.proj, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ngit push -q "+bare+" HEAD:main\necho hook ran > hook-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tty := filepath.Join(r.dir, "tty-y")
	if err := os.WriteFile(tty, []byte("y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	openTTY = func() (io.ReadWriteCloser, error) { return openFakeTTY(tty) }
	code, _, stderr := shellRun(context.Background(), "git commit -q --allow-empty -m two")
	if pushed(t, bare) {
		t.Fatalf("the hook pushed (exit %d):\n%s", code, stderr)
	}
	if !r.exists("hook-ran") || !strings.Contains(stderr, "denied at run time: ") ||
		!strings.Contains(stderr, "push") || !strings.Contains(stderr, "covers its own commands only") {
		t.Errorf("exit %d; stderr:\n%s", code, stderr)
	}
	// The approved line itself ran.
	out, _ := exec.Command("git", "-C", r.proj, "log", "--oneline").CombinedOutput()
	if !bytes.Contains(out, []byte("two")) {
		t.Errorf("the approved commit did not run: %s\n%s", out, stderr)
	}
	// Approved, the push itself runs.
	os.Remove(hook)
	code, _, stderr = shellRun(context.Background(), "git push -q "+bare+" HEAD:main")
	if code != 0 || !pushed(t, bare) {
		t.Errorf("the approved push: exit %d\n%s", code, stderr)
	}
}

// protectedSaid reports whether stderr says that the line could not
// change the protected path p: read-only for it (where the layer has a
// mount namespace), or undone after it.
func protectedSaid(stderr, p string) bool {
	return strings.Contains(stderr, p+", a protected path; undone") ||
		strings.Contains(stderr, "may not write "+p+", a protected path: read-only")
}

// What a line changes of the checkout's protected paths (.git/config, a
// hook, a manifest, agent settings) is refused (read-only for it) or
// undone when it ends, named on stderr and in the decision log, and the
// line fails; other files stay.
func TestRuntimeProtectedPaths(t *testing.T) {
	r, _ := gitRT(t, "local-changes")
	config, _ := os.ReadFile(filepath.Join(r.proj, ".git", "config"))
	if err := os.MkdirAll(filepath.Join(r.proj, ".agents", "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.file(t, ".agents/config/grants.txt", "allow git status\n")
	r.file(t, "plant.sh", `printf '[core]\n\tfsmonitor = touch pwned\n' >> .git/config
printf '#!/bin/sh\ntouch pwned\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout
echo 'allow curl' >> .agents/config/grants.txt
mkdir -p .claude && echo '{}' > .claude/settings.json
echo ok > src.txt
`)
	code, _, stderr := shellRun(context.Background(), "bash plant.sh")
	if code == 0 {
		t.Errorf("exit 0:\n%s", stderr)
	}
	for _, f := range []string{".git/config", ".git/hooks/post-checkout", ".agents/config/grants.txt", ".claude/settings.json"} {
		if !protectedSaid(stderr, filepath.Join(r.proj, f)) {
			t.Errorf("%s not reported:\n%s", f, stderr)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(r.proj, ".git", "config")); !bytes.Equal(got, config) {
		t.Errorf(".git/config not restored:\n%s", got)
	}
	if r.exists(".git/hooks/post-checkout") || r.exists(".claude/settings.json") {
		t.Error("a planted file stayed")
	}
	if got, _ := os.ReadFile(filepath.Join(r.proj, ".agents", "config", "grants.txt")); string(got) != "allow git status\n" {
		t.Errorf("manifest: %q", got)
	}
	if !r.exists("src.txt") {
		t.Error("an unprotected file was undone")
	}
	logPath, _ := decisionlog.Path(os.Getenv)
	if data, _ := os.ReadFile(logPath); !bytes.Contains(data, []byte(`"tool":"write"`)) || !bytes.Contains(data, []byte("post-checkout")) {
		t.Errorf("not in the decision log:\n%s", data)
	}
	// A change the person approved with the line stays.
	tty := filepath.Join(r.dir, "tty-y")
	if err := os.WriteFile(tty, []byte("y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	openTTY = func() (io.ReadWriteCloser, error) { return openFakeTTY(tty) }
	code, _, stderr = shellRun(context.Background(), "git config user.name approved")
	if got, _ := os.ReadFile(filepath.Join(r.proj, ".git", "config")); code != 0 || !bytes.Contains(got, []byte("approved")) {
		t.Errorf("the approved change was undone (exit %d):\n%s\n%s", code, got, stderr)
	}
	// Unapproved, the same change is undone.
	openTTY = func() (io.ReadWriteCloser, error) { return nil, os.ErrNotExist }
	r.file(t, "cfg.sh", "git config user.name planted\n")
	code, _, stderr = shellRun(context.Background(), "bash cfg.sh")
	if got, _ := os.ReadFile(filepath.Join(r.proj, ".git", "config")); code == 0 || bytes.Contains(got, []byte("planted")) {
		t.Errorf("the planted change stayed (exit %d):\n%s\n%s", code, got, stderr)
	}
	// A line that changes nothing protected succeeds.
	if code, _, stderr := shellRun(context.Background(), "git status --short"); code != 0 {
		t.Errorf("git status: exit %d\n%s", code, stderr)
	}
}

// Metadata outside the scope cannot change; a cross-directory rename
// inside it works at every level.
func TestRuntimeMetadataAndRenames(t *testing.T) {
	for _, profile := range []string{"local-changes", "full-access"} {
		t.Run(profile, func(t *testing.T) {
			r := newRT(t, profile)
			canary := filepath.Join(r.outside, "canary")
			if err := os.WriteFile(canary, []byte("c"), 0o600); err != nil {
				t.Fatal(err)
			}
			r.file(t, "m.sh", "mkdir -p a b && echo x > a/f && mv a/f b/f && echo moved\nchmod 666 "+canary+"\ntouch -d 2001-01-01 "+canary+"\n")
			_, stdout, stderr := shellRun(context.Background(), "bash m.sh")
			if !strings.Contains(stdout, "moved") {
				t.Errorf("rename failed:\n%s", stderr)
			}
			fi, _ := os.Stat(canary)
			changed := fi.Mode().Perm() != 0o600
			if want := profile == "full-access"; changed != want {
				t.Errorf("canary changed %v, want %v:\n%s", changed, want, stderr)
			}
		})
	}
}

// A person who approves a line that writes .git/config.worktree approves
// that path, not every protected path whose name it contains: a
// core.fsmonitor the line plants in .git/config through a script is
// undone (the approved paths were once matched as substrings of a reason
// text, and .git/config is a substring of .git/config.worktree).
func TestRuntimeApprovalKeepsOnlyItsPaths(t *testing.T) {
	r, _ := gitRT(t, "local-changes")
	config, _ := os.ReadFile(filepath.Join(r.proj, ".git", "config"))
	r.file(t, "plant.sh", "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config\n")
	tty := filepath.Join(r.dir, "tty-y")
	if err := os.WriteFile(tty, []byte("y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	openTTY = func() (io.ReadWriteCloser, error) { return openFakeTTY(tty) }
	code, _, stderr := shellRun(context.Background(), `printf '[user]\n\tname = approved\n' > .git/config.worktree; bash plant.sh`)
	if got, _ := os.ReadFile(filepath.Join(r.proj, ".git", "config")); !bytes.Equal(got, config) {
		t.Errorf("the planted core.fsmonitor stayed (exit %d):\n%s\n%s", code, got, stderr)
	}
	if !protectedSaid(stderr, filepath.Join(r.proj, ".git", "config")) {
		t.Errorf(".git/config not reported:\n%s", stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(r.proj, ".git", "config.worktree")); !bytes.Contains(got, []byte("approved")) {
		t.Errorf("the approved write was undone (exit %d): %q\n%s", code, got, stderr)
	}
}

// replay decides a run-time entry as the run-time layer decided it: under
// the config that decided it, nothing changes (the static reading asks
// about an allowed program run by its path, which at run time is checked
// as it runs).
func TestReplayRuntimeEntries(t *testing.T) {
	r := newRTConfig(t, `{"userSettings": {"globalPermissionGrants": {"allow": ["command(bash)", "command(mytool)"]}},
 "agentShim": {"version": 1, "profile": "local-changes", "rules": []}}`)
	r.file(t, "build.sh", "#!/bin/sh\n\"$PWD/mytool\" x\n")
	r.file(t, "mytool", "#!/bin/sh\nexit 0\n")
	if code, _, stderr := shellRun(context.Background(), "bash build.sh"); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	logPath, _ := decisionlog.Path(os.Getenv)
	entries, _, err := decisionlog.Read(logPath, 0)
	if err != nil {
		t.Fatal(err)
	}
	runtime := 0
	for _, en := range entries {
		if en.Layer == decisionlog.LayerRuntime && len(en.Argv) > 0 && strings.HasSuffix(en.Argv[0], "/mytool") && en.Verdict == "default" {
			runtime++
		}
	}
	if runtime == 0 {
		t.Fatalf("no run-time entry for mytool in %+v", entries)
	}
	var out, stderr bytes.Buffer
	if code := run(context.Background(), []string{"agent-shim", "replay", "--json"}, nil, &out, &stderr); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr.String())
	}
	var rep struct {
		Replayed int
		Changes  []any
		Commands []any
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 0 || rep.Replayed < runtime {
		t.Errorf("replay under the same config: %s", out.String())
	}
}

// An execution refused at run time for want of a person's approval says
// how to allow it for good, as the hook does: the grant for config.json.
// The grant it names does allow it.
func TestRuntimeAskHint(t *testing.T) {
	r := newRT(t, "local-changes")
	r.file(t, "ask.sh", "mkdir asked\n")
	_, _, stderr := shellRun(context.Background(), "bash ask.sh")
	cfg := filepath.Join(r.dir, "home", ".gemini", "config", "config.json")
	m := regexp.MustCompile(`agent-shim: denied at run time: .*mkdir asked: matches an ask rule: .*, and nobody approved the line that runs it; to allow it, add "([^"]+)" to agentShim.tools.allow in ` + regexp.QuoteMeta(cfg) + `\n`).FindStringSubmatch(stderr)
	if m == nil || r.exists("asked") {
		t.Fatalf("the refusal does not say how to allow it:\n%s", stderr)
	}
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"rules": []`), []byte(`"rules": [], "tools": {"allow": [`+strconv.Quote(m[1])+`]}`), 1)
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := shellRun(context.Background(), "bash ask.sh"); code != 0 || !r.exists("asked") {
		t.Errorf("with %q in agentShim.tools.allow: exit %d\n%s", m[1], code, stderr)
	}
	// An agent approving itself is refused whatever a grant says: no
	// grant is offered. (Its hook runs under the layer: it writes nothing
	// that decides.)
	r.file(t, "self.sh", "ln -sf \"$(type -P true)\" agent-shim; ./agent-shim approve x; ./agent-shim hook claude-code && echo hook-ran\n")
	if _, out, stderr := shellRun(context.Background(), "bash self.sh"); strings.Contains(stderr, "to allow it") ||
		!strings.Contains(stderr, "an agent cannot approve itself") || !strings.Contains(out, "hook-ran") {
		t.Errorf("running agent-shim approve, then its hook:\n%s%s", out, stderr)
	}
	// A deny says no grant: its rule is named.
	r.file(t, "deny.sh", "touch denied\n")
	if _, _, stderr := shellRun(context.Background(), "bash deny.sh"); strings.Contains(stderr, "to allow it") || !strings.Contains(stderr, "`command(touch denied)`") {
		t.Errorf("a deny:\n%s", stderr)
	}
}

// agent-shim run -- <agent>: the agent (named with --agent, or known by
// its program's name) writes its own directory, but not its settings nor
// the policy; another program does not write it, and is told how.
func TestRunAgentState(t *testing.T) {
	r := newRT(t, "local-changes")
	home := os.Getenv("HOME")
	claude := filepath.Join(home, ".claude")
	settings := filepath.Join(claude, "settings.json")
	if err := os.MkdirAll(claude, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"hooks": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, ".gemini", "config", "config.json")
	policy, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The agent writes its state itself, as bash's redirections do (a
	// program it ran to write there would be decided by the policy,
	// which protects the agents' directories from lines).
	r.file(t, "agent.sh", `echo s > "$HOME/.claude/s.jsonl"
echo '{}' > "$HOME/.claude/settings.json"
echo '{}' > "$HOME/.gemini/config/config.json"
touch agent-ran
exit 3
`)
	// A program named as the agent's is the agent.
	bin := filepath.Join(r.dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/bash\nexec bash agent.sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, argv := range [][]string{{"--agent", "claude-code", "--", "bash", "agent.sh"}, {"--", "claude"}} {
		t.Logf("agent-shim run %q", argv)
		os.Remove(filepath.Join(claude, "s.jsonl"))
		os.Remove(filepath.Join(r.proj, "agent-ran"))
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"agent-shim", "run"}, argv...), strings.NewReader(""), &out, &errb)
		if !r.exists("agent-ran") {
			t.Fatalf("the program did not run: exit %d\n%s", code, errb.String())
		}
		if data, err := os.ReadFile(filepath.Join(claude, "s.jsonl")); err != nil || string(data) != "s\n" {
			t.Errorf("the agent could not write its own directory: %q %v\n%s", data, err, errb.String())
		}
		if data, _ := os.ReadFile(settings); string(data) != `{"hooks": {}}` {
			t.Errorf("the agent's settings changed: %q", data)
		}
		if data, _ := os.ReadFile(cfg); !bytes.Equal(data, policy) {
			t.Errorf("the policy changed: %q", data)
		}
		if code != 3 || !strings.Contains(errb.String(), "may not write "+settings+", a protected path") {
			t.Errorf("exit %d, want the program's 3 and the refused write to the settings said\n%s", code, errb.String())
		}
	}
	// Another program does not write the agent's directory, and is told
	// how to let the agent; nor does one named like the agent by its
	// path (a checkout's ./claude).
	r.file(t, "claude", "#!/bin/bash\nexec bash agent.sh\n")
	var out, errb bytes.Buffer
	os.Remove(filepath.Join(claude, "s.jsonl"))
	run(context.Background(), []string{"agent-shim", "run", "--", "./claude"}, strings.NewReader(""), &out, &errb)
	if _, err := os.Stat(filepath.Join(claude, "s.jsonl")); err == nil || !r.exists("agent-ran") {
		t.Errorf("./claude wrote Claude Code's directory, or did not run\n%s", errb.String())
	}
	errb.Reset()
	os.Remove(filepath.Join(claude, "s.jsonl"))
	run(context.Background(), []string{"agent-shim", "run", "--", "bash", "agent.sh"}, strings.NewReader(""), &out, &errb)
	if _, err := os.Stat(filepath.Join(claude, "s.jsonl")); err == nil {
		t.Errorf("bash wrote Claude Code's directory")
	}
	if !strings.Contains(errb.String(), "agent-shim run --agent claude-code --") {
		t.Errorf("no hint names --agent:\n%s", errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"agent-shim", "run", "--agent", "claud", "--", "bash", "agent.sh"}, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("--agent claud: exit %d\n%s", code, errb.String())
	}
}
