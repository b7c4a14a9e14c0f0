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
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/internal/policycheck"
)

// TestOneDoor: every front end decides through the gate, so none can
// disagree. A checkout's manifests, with an overlay's program facts
// (`mytool --hook CMD` runs CMD), are applied by agents-setup; then every
// row of the three shared corpora, and lines aimed at the facts and the
// tool patterns, is decided by the Go API (gate.Load), explain, the
// Claude Code hook, shell mode and the policy tests' gate (--check), and
// the hook's decisions are replayed. The verdicts must be one.
//
// The config is decided twice: as agents-setup wrote it (all six agree),
// and with the user's tool patterns added by hand (all but --check, which
// decides the manifests alone, agree).
func TestOneDoor(t *testing.T) {
	cfg, proj, _ := appliedCheckout(t, map[string]string{
		"permissions/read_only.txt":        "git status\ngit diff\ngit log\nls\ncat\ngrep\nrg\necho\ngo test\ngo build\ngit grep\ngit ls-remote\nfind\nmake\nnpm test\njiri runp\nmytool\n",
		"permissions/external_changes.txt": "git push\ngit commit\nrm\nsed -i\ncurl\nwget\n",
		"permissions/never_allow.txt":      "git push --force\ngit push -f\ngit push --force-with-lease\nrm -rf /\ngit reset --hard\ngit clean -fdx\n",
		"programs.txt":                     "[mytool]\nexec --hook\n",
	})
	tree, err := manifest.Load(proj)
	if err != nil {
		t.Fatal(err)
	}
	checkGate, err := policycheck.Gate(tree, "local-changes")
	if err != nil {
		t.Fatal(err)
	}

	lines := corpusLines(t)
	lines = append(lines,
		`mytool build`, `mytool --hook "rm -rf build"`, `mytool --hook=x`, `npm publish`, `npm publish --tag x`,
		`echo x > notes.txt`, `echo x > /etc/motd`, `echo x >> .git/config`, `cat ~/.bashrc`)
	t.Chdir(proj)
	t.Setenv("AGENT_SHIM_SESSION", "door-shell") // shell mode's session: no ticket of the hook's
	useSeams(t, nil)

	base, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, withTools := range []bool{false, true} {
		if withTools {
			var doc map[string]any
			if err := json.Unmarshal(base, &doc); err != nil {
				t.Fatal(err)
			}
			doc["agentShim"].(map[string]any)["tools"] = map[string]any{
				"allow": []string{"bash:mytool *", "bash:npm **"}, "deny": []string{"bash:npm publish*"}}
			data, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		logPath := filepath.Join(os.Getenv("XDG_STATE_HOME"), "agent-shim", decisionlog.FileName)
		os.Remove(logPath)
		api, err := gate.Load(cfg, gate.Options{Scope: gate.NewScope(proj), Dir: proj})
		if err != nil {
			t.Fatal(err)
		}
		hooked := 0
		for _, line := range lines {
			want := api.DecideBash(line)
			got := map[string]string{
				"explain": doorExplain(t, cfg, proj, line),
				"hook":    doorHook(t, cfg, proj, line),
			}
			hooked++
			if ran := doorShell(t, line); ran != (want.Verdict == gate.Allow) {
				got["shell mode ran it"] = "allow"
				if !ran {
					got["shell mode ran it"] = "not allow"
				}
			}
			if !withTools {
				got["--check"] = checkGate.DecideBash(line).Verdict.String()
			}
			for front, v := range got {
				if v != want.Verdict.String() && !(front == "shell mode ran it" && v == "not allow" && want.Verdict != gate.Allow) {
					t.Errorf("tools=%v %q: %s says %s, the Go API %s (%s)", withTools, line, front, v, want.Verdict, want.Reason)
				}
			}
		}
		// The hook's decisions, replayed under the same config, change
		// nothing.
		var out, stderr bytes.Buffer
		if code := run(context.Background(), []string{"agent-shim", "replay", "--json", "--config", cfg, "--log", logPath}, nil, &out, &stderr); code != 0 {
			t.Fatalf("replay: exit %d: %s", code, stderr.String())
		}
		var rep struct {
			Replayed int `json:"replayed"`
			Changes  []struct {
				From, To string
				Count    int
			} `json:"changes"`
			Commands []struct{ Command string } `json:"commands"`
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("replay: %v\n%s", err, out.String())
		}
		if len(rep.Changes) != 0 || rep.Replayed < hooked/2 {
			t.Errorf("tools=%v: replay of %d hook decisions: %d replayed, changes %+v %+v", withTools, hooked, rep.Replayed, rep.Changes, rep.Commands)
		}
	}
	doorApprovals(t, cfg, proj)
}

// doorApprovals: the door also decides what approvals and protected paths
// are. What approving a line lets it change of the protected paths is one
// answer (the Go API's Decision.Covers, explain's writes); an "always"
// answer given in shell mode is seen by every front end, for that line
// only.
func doorApprovals(t *testing.T, cfg, proj string) {
	t.Helper()
	api := func() *gate.Gate {
		g, err := gate.Load(cfg, gate.Options{Scope: gate.NewScope(proj), Dir: proj})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, tc := range []struct {
		line   string
		writes []string
	}{
		{"echo x >> .git/config", []string{".git/config"}},
		{"echo x > .git/config.worktree", []string{".git/config.worktree"}},
		{"git config core.fsmonitor x", []string{".git/config"}},
		{"mkdir -p .claude && echo '{}' > .claude/settings.json", []string{".claude/settings.json"}},
		{"echo x > notes.txt", nil},
	} {
		d := api().DecideBash(tc.line)
		var want []string
		for _, w := range tc.writes {
			want = append(want, filepath.Join(proj, w))
		}
		if d.Covers == nil || !slices.Equal(d.Covers.Writes, want) {
			t.Errorf("%q: the Go API says it writes %v, want %q", tc.line, d.Covers, want)
			continue
		}
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"agent-shim", "explain", "--json", "--config", cfg, "--cwd", proj, tc.line},
			nil, &stdout, &stderr); code != 0 {
			t.Fatalf("explain: exit %d: %s", code, stderr.String())
		}
		var x struct{ Writes []string }
		if err := json.Unmarshal(stdout.Bytes(), &x); err != nil || !slices.Equal(x.Writes, want) {
			t.Errorf("%q: explain says it writes %q (%v), the Go API %q", tc.line, x.Writes, err, want)
		}
	}
	// An "always" answer on the terminal of shell mode.
	approved, other := "git push origin feature", "git push origin other"
	before := api().DecideBash(other).Verdict
	if before == gate.Allow || api().DecideBash(approved).Verdict == gate.Allow {
		t.Fatalf("%q or %q is allowed before any answer", approved, other)
	}
	tty := filepath.Join(t.TempDir(), "tty")
	if err := os.WriteFile(tty, []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := useSeams(t, func() (io.ReadWriteCloser, error) { return openFakeTTY(tty) })
	if code := run(context.Background(), []string{"agent-shim", "-c", approved}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}); code != 0 || len(s.execs) != 1 {
		t.Fatalf("shell mode with the answer a: exit %d, %d execs", code, len(s.execs))
	}
	useSeams(t, nil)
	for line, want := range map[string]gate.Verdict{approved: gate.Allow, other: before} {
		if d := api().DecideBash(line); d.Verdict != want {
			t.Errorf("%q after the answer: the Go API says %s (%s), want %s", line, d.Verdict, d.Reason, want)
		}
		got := map[string]string{"explain": doorExplain(t, cfg, proj, line), "hook": doorHook(t, cfg, proj, line)}
		if ran := doorShell(t, line); ran != (want == gate.Allow) {
			got["shell mode ran it"] = fmt.Sprint(ran)
		}
		for front, v := range got {
			if v != want.String() {
				t.Errorf("%q after the answer: %s says %s, want %s", line, front, v, want)
			}
		}
	}
}

// corpusLines returns the command of every row of the shared corpora.
func corpusLines(t *testing.T) []string {
	t.Helper()
	corpora, err := filepath.Glob(filepath.Join("..", "..", "matcher", "testdata", "adversarial*.tsv"))
	if err != nil || len(corpora) < 3 {
		t.Fatalf("want three corpora, found %q: %v", corpora, err)
	}
	var lines []string
	for _, c := range corpora {
		data, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range strings.Split(strings.TrimRight(string(data), "\n"), "\n")[1:] {
			f := strings.Split(row, "\t")
			lines = append(lines, strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(f[0]))
		}
	}
	return lines
}

func doorExplain(t *testing.T, cfg, cwd, line string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"agent-shim", "explain", "--json", "--config", cfg, "--cwd", cwd, "-"},
		strings.NewReader(line), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("explain %q: exit %d: %s", line, code, stderr.String())
	}
	var x struct{ Verdict string }
	if err := json.Unmarshal(stdout.Bytes(), &x); err != nil {
		t.Fatalf("explain %q: %v", line, err)
	}
	return x.Verdict
}

// doorHook answers line as a Claude Code PreToolUse and returns the
// verdict the answer gives: no output is default.
func doorHook(t *testing.T, cfg, cwd, line string) string {
	t.Helper()
	in, err := json.Marshal(map[string]any{"session_id": "door-hook", "cwd": cwd, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]string{"command": line}})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"agent-shim", "hook", "claude-code", "--config", cfg}, bytes.NewReader(in), &stdout, &stderr); code != 0 {
		if strings.ContainsAny(line, "\x00\r") {
			return "deny" // blocked: a line the shell reads otherwise
		}
		t.Fatalf("hook %q: exit %d: %s", line, code, stderr.String())
	}
	if stdout.Len() == 0 {
		return "default"
	}
	var out struct {
		HookSpecificOutput struct{ PermissionDecision string } `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("hook %q: %v: %s", line, err, stdout.String())
	}
	return out.HookSpecificOutput.PermissionDecision
}

// doorShell runs line through shell mode with nobody to ask, and reports
// whether the real shell was started.
func doorShell(t *testing.T, line string) bool {
	t.Helper()
	s := useSeams(t, nil)
	code := run(context.Background(), []string{"agent-shim", "-c", line}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	return code == 0 && len(s.execs) == 1
}

// appliedCheckout makes a git checkout in a test home with files under its
// .agents/config/ (name relative to it: "permissions/read_only.txt") and
// applies them with agents-setup at local-changes; it returns config.json,
// the checkout and the agents-setup binary.
func appliedCheckout(t *testing.T, files map[string]string) (cfg, proj, setup string) {
	t.Helper()
	dir, cfg := testEnv(t, "")
	_, proj = checkout(t, dir)
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(proj, ".agents", "config", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setup = buildBinary(t, t.TempDir(), "agents-setup")
	cmd := exec.Command(setup, "--config", cfg, "--root", proj, "--profile", "local-changes")
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agents-setup: %v\n%s", err, out)
	}
	return cfg, proj, setup
}
