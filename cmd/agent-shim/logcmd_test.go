package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/supervisor"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/google/go-cmp/cmp"
)

// A decision log that cannot be written (its path a directory, a FIFO
// nobody reads, a link to /dev/full, a state directory that is a file)
// changes no hook answer and no exit code.
func TestLogNeverChangesVerdict(t *testing.T) {
	dir := t.TempDir()
	for _, kv := range pinnedEnv(dir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(`{"userSettings":{"globalPermissionGrants":{"allow":["command(git status)"],"ask":["command(git push)"],"deny":["command(git branch -D)"]}},"agentShim":{"version":1,"profile":"local-changes","rules":[]}}`), 0o600)
	commands := []string{"git status", "git push origin main", "git branch -D x", "make", "git status; rm -rf /", "curl x | sh"}
	hook := func() []string {
		var got []string
		for _, c := range commands {
			in := fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%q}}`, proj, c)
			var out, errb strings.Builder
			code := run(context.Background(), []string{"agent-shim", "hook", "claude-code", "--config", cfg}, strings.NewReader(in), &out, &errb)
			got = append(got, fmt.Sprintf("%d %s", code, out.String()))
		}
		return got
	}
	want := hook()
	logPath := filepath.Join(dir, "xdg", "state", "agent-shim", decisionlog.FileName)
	if es, _, err := decisionlog.Read(logPath, 0); err != nil || len(es) != len(commands) {
		t.Fatalf("the working log has %d entries (%v), want %d", len(es), err, len(commands))
	}
	breakages := map[string]func(t *testing.T){
		"log is a directory": func(t *testing.T) { os.Remove(logPath); os.Mkdir(logPath, 0o700) },
		"log is a FIFO": func(t *testing.T) {
			os.Remove(logPath)
			if err := syscall.Mkfifo(logPath, 0o600); err != nil {
				t.Skipf("no FIFOs: %v", err)
			}
		},
		"log links to /dev/full": func(t *testing.T) { os.Remove(logPath); os.Symlink("/dev/full", logPath) },
		"state dir is a file": func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "config.json"))
		},
	}
	for name, breakIt := range breakages {
		t.Run(name, func(t *testing.T) {
			os.RemoveAll(logPath)
			breakIt(t)
			if diff := cmp.Diff(want, hook()); diff != "" {
				t.Errorf("answers changed (-working log +broken log):\n%s", diff)
			}
		})
	}
}

// BenchmarkHookLog is BenchmarkHook with the decision log off and on: what
// logging a decision adds to a hook call.
//
//	go test ./cmd/agent-shim -run '^$' -bench 'BenchmarkHookLog' -benchtime 3s -count 5
func BenchmarkHookLog(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("log=%v", on), func(b *testing.B) {
			old := logDecisions
			logDecisions = on
			defer func() { logDecisions = old }()
			BenchmarkHook(b)
		})
	}
}

// TestNoManifestReader keeps go-git (which the manifest reader and the
// policy checks link) out of agent-shim: every hook call pays for the
// packages it links.
func TestNoManifestReader(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Env = origEnv
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/go-git/") || pkg == "github.com/agent-shim/agent-shim/internal/policycheck" {
			t.Errorf("agent-shim links %s", pkg)
		}
	}
}

// BenchmarkHookLogAB alternates hook calls without and with the decision
// log, call by call, so that a loaded machine slows both alike, and
// reports the median of each and the overhead of logging in percent.
//
//	go test ./cmd/agent-shim -run '^$' -bench BenchmarkHookLogAB -benchtime 2000x
func BenchmarkHookLogAB(b *testing.B) {
	dir := b.TempDir()
	env := pinnedEnv(dir)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	cfg := fuchsiaConfig(b, dir, env)
	in := fmt.Sprintf(`{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status && fx build"},"tool_use_id":"t1"}`, filepath.Join(dir, "ck"))
	args := []string{"agent-shim", "hook", "claude-code", "--config", cfg}
	old := logDecisions
	defer func() { logDecisions = old }()
	call := func(log bool) time.Duration {
		logDecisions = log
		var out, stderr strings.Builder
		start := time.Now()
		if code := run(b.Context(), args, strings.NewReader(in), &out, &stderr); code != 0 || !strings.Contains(out.String(), `"allow"`) {
			b.Fatalf("exit %d: %s%s", code, out.String(), stderr.String())
		}
		return time.Since(start)
	}
	call(false) // warm the policy cache
	var off, on []time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			off = append(off, call(false))
			on = append(on, call(true))
		} else {
			on = append(on, call(true))
			off = append(off, call(false))
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2])
	}
	mOff, mOn := median(off), median(on)
	b.ReportMetric(mOff, "ns-nolog")
	b.ReportMetric(mOn, "ns-log")
	b.ReportMetric(100*(mOn-mOff)/mOff, "%overhead")
	if es, _, err := decisionlog.Read(filepath.Join(dir, "xdg", "state", "agent-shim", decisionlog.FileName), 0); err != nil || len(es) != len(on) {
		b.Fatalf("the log has %d entries (%v), want %d", len(es), err, len(on))
	}
}

// The run-time layer's decisions: every refusal, and each program's first
// allowed execution.
func TestLogExecs(t *testing.T) {
	dir := t.TempDir()
	for _, kv := range pinnedEnv(dir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	e := &env{getenv: os.Getenv}
	never := matcher.New().Add(matcher.Deny, "rm -r /", matcher.Source{Category: "never_allow", Overlay: "builtin"})
	decide := e.shellMode().Run(nil, "shell", nil).LogExecs(func(x supervisor.Exec) (supervisor.Verdict, gate.Decision) {
		if x.Path == "/usr/bin/rm" {
			reason := "never allowed: `rm -r /`"
			return supervisor.Verdict{Reason: reason}, gate.Decision{Verdict: gate.Deny, Reason: reason, Rule: never}
		}
		return supervisor.Verdict{Allow: true}, gate.Decision{Verdict: gate.Allow}
	})
	for _, x := range []supervisor.Exec{
		{Path: "/usr/bin/cc", Argv: []string{"cc", "-c", "a.c"}, Dir: "/src"},
		{Path: "/usr/bin/cc", Argv: []string{"cc", "-c", "b.c"}, Dir: "/src"},
		{Path: "/usr/bin/rm", Argv: []string{"rm", "-rf", "/"}, Dir: "/src"},
		{Path: "/usr/bin/rm", Argv: []string{"rm", "-rf", "/"}, Dir: "/src"},
		{Path: "/usr/bin/env", Argv: []string{"env", "API_TOKEN=s3cret", "make"}, Dir: "/src"},
	} {
		decide(x)
	}
	es, _, err := decisionlog.Read(filepath.Join(dir, "xdg", "state", "agent-shim", decisionlog.FileName), 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, en := range es {
		got = append(got, fmt.Sprintf("%s %s %s %q %v", en.Layer, en.Verdict, en.Command, en.Argv, en.Rule))
	}
	want := []string{
		`runtime allow cc -c a.c ["cc" "-c" "a.c"] `,
		"runtime deny rm -rf / [\"rm\" \"-rf\" \"/\"] `rm -r /` (builtin)",
		"runtime deny rm -rf / [\"rm\" \"-rf\" \"/\"] `rm -r /` (builtin)",
		`runtime allow env 'API_TOKEN=REDACTED' make ["env" "API_TOKEN=REDACTED" "make"] `,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("logged (-want +got):\n%s", diff)
	}
}
