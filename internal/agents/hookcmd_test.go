package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestIsOurCommand(t *testing.T) {
	tests := []struct {
		cmd, agent string
		want       bool
	}{
		{"/home/u/go/bin/agent-shim hook claude-code", "claude-code", true},
		{"agent-shim hook claude-code --config /x.json", "claude-code", true},
		{"'/opt/my tools/agent-shim' hook codex", "codex", true},
		{`"/opt/tools/agent-shim" hook gemini-cli`, "gemini-cli", true},
		{"/home/u/go/bin/agent-shim hook claude-code", "codex", false},
		{"/home/u/go/bin/agent-shim explain x", "claude-code", false},
		{"my-linter hook claude-code", "claude-code", false},
		{"agent-shim hook claude-code; rm -rf ~", "claude-code", false},
		{"X=1 agent-shim hook claude-code", "claude-code", false},
		{"$HOME/bin/agent-shim hook claude-code", "claude-code", false},
		{"agent-shim hook", "claude-code", false},
		{"", "claude-code", false},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.cmd)
		if got := ByName(tc.agent).IsOurs(tc.cmd); got != tc.want {
			t.Errorf("IsOurs(%q) of %s = %v, want %v", tc.cmd, tc.agent, got, tc.want)
		}
	}
}

func TestHookCommand(t *testing.T) {
	for _, tc := range []struct{ exe, cfg, want string }{
		{"/home/u/go/bin/agent-shim", "", "/home/u/go/bin/agent-shim hook claude-code"},
		{"/opt/my tools/agent-shim", "/etc/a b.json", "'/opt/my tools/agent-shim' hook claude-code --config '/etc/a b.json'"},
	} {
		got := Claude.HookCommand(tc.exe, tc.cfg)
		if got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
		if !Claude.IsOurs(got) {
			t.Errorf("%q is not recognised as ours", got)
		}
	}
}

// TestGuardedCommand runs the exact hook command install writes for Codex
// and Gemini CLI, through /bin/sh -c as both agents do, around a fake
// shim in a temporary directory: every way the shim can fail ends in exit
// 2, nothing on stdout (a half-written answer could read as "allow"), and
// text on stderr that is not JSON — Codex blocks on exit 2, Gemini CLI
// denies on exit >= 2 with output that is not JSON. A healthy shim's
// answer and exit status pass through. Both guards are run: timeout
// (Linux) and perl (macOS).
func TestGuardedCommand(t *testing.T) {
	defer func(s int) { GuardSeconds = s }(GuardSeconds)
	GuardSeconds = 1 // the commands are made before the deferred reset
	tests := []struct {
		name, shim string // shim "": none there
		wantCode   int
		wantOut    string
	}{
		{name: "healthy", shim: "#!/bin/sh\nprintf '{\"ok\": '; cat; printf '}\\n'\n", wantCode: 0, wantOut: "{\"ok\": {\"in\": 1}}\n"},
		{name: "blocking answer", shim: "#!/bin/sh\necho 'denied: rm -rf /' >&2\nexit 2\n", wantCode: 2},
		{name: "missing", wantCode: 2},
		{name: "exit 127", shim: "#!/bin/sh\nexit 127\n", wantCode: 2},
		{name: "exit 1 and garbage", shim: "#!/bin/sh\necho 'panic: \x01\xff garbage'\nexit 1\n", wantCode: 2},
		{name: "exit 1 and an allow", shim: "#!/bin/sh\necho '{\"decision\": \"allow\"}'\nexit 1\n", wantCode: 2},
		{name: "not executable", shim: "", wantCode: 2},
		{name: "sleeps past the time", shim: "#!/bin/sh\necho '{\"decision\": \"allow\"}'\nexec sleep 60\n", wantCode: 2},
		{name: "ignores SIGTERM", shim: "#!/bin/sh\ntrap '' TERM\necho '{\"decision\": \"allow\"}'\nsleep 60\n", wantCode: 2},
		{name: "killed", shim: "#!/bin/sh\necho '{\"decision\": \"allow\"}'\nkill -9 $$\n", wantCode: 2},
	}
	// Every command runs at once (most of them wait out the guard), and
	// the results are checked after.
	type result struct {
		name, cmd      string
		code           int
		stdout, stderr string
		took           time.Duration
		err            error
		want           int
		wantOut        string
	}
	var results []*result
	var wg sync.WaitGroup
	for _, guard := range []func() string{guardTimeout, guardPerl} {
		g := guard()
		for _, agent := range []string{"codex", "gemini-cli"} {
			for _, tc := range tests {
				dir := t.TempDir()
				exe := filepath.Join(dir, "bin dir", "agent-shim")
				if tc.name != "missing" {
					if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
						t.Fatal(err)
					}
					mode := os.FileMode(0o755)
					if tc.name == "not executable" {
						mode = 0o644
					}
					if err := os.WriteFile(exe, []byte(tc.shim), mode); err != nil {
						t.Fatal(err)
					}
				}
				r := &result{name: agent + "/" + strings.Fields(g)[0] + "/" + tc.name,
					cmd: Guarded(g, ByName(agent).PlainCommand(exe, "")), want: tc.wantCode, wantOut: tc.wantOut}
				results = append(results, r)
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := exec.Command("/bin/sh", "-c", r.cmd)
					c.Dir = dir
					c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
					c.Stdin = strings.NewReader(`{"in": 1}`)
					var stdout, stderr strings.Builder
					c.Stdout, c.Stderr = &stdout, &stderr
					start := time.Now()
					err := c.Run()
					r.took = time.Since(start)
					r.stdout, r.stderr = stdout.String(), stderr.String()
					var ee *exec.ExitError
					if errors.As(err, &ee) {
						r.code = ee.ExitCode()
					} else {
						r.err = err
					}
				}()
			}
		}
	}
	wg.Wait()
	for _, r := range results {
		t.Logf("input: %s: %q", r.name, r.cmd)
		if r.err != nil {
			t.Errorf("%s: %v", r.name, r.err)
			continue
		}
		if r.code != r.want || r.stdout != r.wantOut {
			t.Errorf("%s: exit %d, stdout %q; want exit %d, stdout %q (stderr %q)", r.name, r.code, r.stdout, r.want, r.wantOut, r.stderr)
		}
		if r.took > 6*time.Second {
			t.Errorf("%s: took %v: past the guard's 1 s (+2 s to kill)", r.name, r.took)
		}
		if r.code != 0 && !strings.HasSuffix(r.stderr, GuardFailure+"\n") {
			t.Errorf("%s: stderr %q does not end with %q", r.name, r.stderr, GuardFailure)
		}
		if r.code != 0 && json.Valid([]byte(strings.TrimSpace(r.stderr))) {
			t.Errorf("%s: stderr %q is JSON: Gemini CLI would read it as the answer", r.name, r.stderr)
		}
	}
}

// The guard ends the shim before the agent kills the hook (and lets the
// call through).
func TestGuardSeconds(t *testing.T) {
	if GuardSeconds+2 >= HookTimeout {
		t.Errorf("guard %d s (+2 s to kill) is not under the agents' hook timeout %d s", GuardSeconds, HookTimeout)
	}
	cmd := Codex.HookCommand("/x/agent-shim", "")
	if !strings.Contains(cmd, fmt.Sprintf(" %d ", GuardSeconds)) && !strings.Contains(cmd, fmt.Sprintf("alarm %d;", GuardSeconds)) {
		t.Errorf("%q does not bound the shim by %d s", cmd, GuardSeconds)
	}
	if Claude.HookCommand("/x/agent-shim", "") != "/x/agent-shim hook claude-code" {
		t.Errorf("Claude Code's hook is guarded by onFailure, not by the command")
	}
}

func TestOurHook(t *testing.T) {
	g := Guarded(guardTimeout(), "'/opt/my tools/agent-shim' hook codex --config /c.json")
	p := Guarded(guardPerl(), "/x/agent-shim hook gemini-cli")
	tests := []struct {
		cmd, agent  string
		exe, cfg    string
		guarded, ok bool
	}{
		{cmd: g, agent: "codex", exe: "/opt/my tools/agent-shim", cfg: "/c.json", guarded: true, ok: true},
		{cmd: g, agent: "gemini-cli"},
		{cmd: p, agent: "gemini-cli", exe: "/x/agent-shim", guarded: true, ok: true},
		{cmd: "/x/agent-shim hook codex", agent: "codex", exe: "/x/agent-shim", ok: true},
		// Not exactly a guarded form: not ours (install replaces it
		// only when it is; doctor reports it as missing).
		{cmd: g + "; rm -rf ~", agent: "codex"},
		{cmd: strings.Replace(g, "exit 2", "exit 0", 1), agent: "codex"},
		{cmd: strings.Replace(g, "timeout -k 2 20", "timeout -k 2 2000", 1), agent: "codex"},
		{cmd: "true || /x/agent-shim hook codex", agent: "codex"},
		{cmd: "/x/agent-shim hook codex > /dev/null", agent: "codex"},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.cmd)
		exe, cfg, guarded, ok := ByName(tc.agent).Ours(tc.cmd)
		if exe != tc.exe || cfg != tc.cfg || guarded != tc.guarded || ok != tc.ok {
			t.Errorf("Ours = %q, %q, %v, %v; want %q, %q, %v, %v", exe, cfg, guarded, ok, tc.exe, tc.cfg, tc.guarded, tc.ok)
		}
	}
}
