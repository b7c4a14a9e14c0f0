package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-shim/agent-shim/decisionlog"
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

func TestRuleOf(t *testing.T) {
	tests := []struct {
		in    string
		rule  *decisionlog.Rule
		floor string
	}{
		{"matches an allow rule: `git status` (.agents/config/permissions/read_only.txt:2)",
			&decisionlog.Rule{Text: "git status", List: "allow", Category: "read_only", Overlay: ".", File: ".agents/config/permissions/read_only.txt", Line: 2}, ""},
		{"git push -f origin: matches a deny rule: `git push --force` (vendor/infra/.agents/config/permissions/never_allow.txt:3)",
			&decisionlog.Rule{Text: "git push --force", List: "deny", Category: "never_allow", Overlay: "vendor/infra", File: "vendor/infra/.agents/config/permissions/never_allow.txt", Line: 3}, ""},
		{"never allowed: `rm -r /`", &decisionlog.Rule{Text: "rm -r /", List: "deny", Category: "never_allow", Overlay: "builtin"}, ""},
		{"matches an ask rule: `command(rm)`", &decisionlog.Rule{Text: "command(rm)", List: "ask"}, ""},
		{"matches an allow rule, but writes /etc/x (>): `echo` (.agents/config/permissions/read_only.txt:5)",
			&decisionlog.Rule{Text: "echo", List: "allow", Category: "read_only", Overlay: ".", File: ".agents/config/permissions/read_only.txt", Line: 5}, "writes /etc/x (>)"},
		{"may match a deny rule: a word or the working directory is not known statically: `rm -rf /` (<builtin>/permissions/never_allow.txt:4)",
			&decisionlog.Rule{Text: "rm -rf /", List: "deny", Category: "never_allow", Overlay: "builtin", File: "<builtin>/permissions/never_allow.txt", Line: 4}, ""},
		{"writes /etc/passwd (>)", nil, "writes /etc/passwd (>)"},
		{"tool pattern denies `git push`", nil, "tool pattern denies `git push`"},
		{"no rule matches", nil, "no rule matches"},
		{"approved", nil, "approved"},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		r, floor := ruleOf(tc.in)
		if diff := cmp.Diff(tc.rule, r); diff != "" || floor != tc.floor {
			t.Errorf("ruleOf(%q): floor %q, want %q; rule (-want +got):\n%s", tc.in, floor, tc.floor, diff)
		}
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
		if strings.HasPrefix(pkg, "github.com/go-git/") || pkg == "github.com/agent-shim/agent-shim/policycheck" {
			t.Errorf("agent-shim links %s", pkg)
		}
	}
}
