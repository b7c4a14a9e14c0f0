package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/sessions"
	"github.com/agent-shim/agent-shim/shellparse"
)

// permissive is the widest policy a config.json can hold: yolo mode, full
// access, every command and every file tool allowed by pattern. Protected
// paths are still asked.
const permissive = `{
  "userSettings": {"globalPermissionGrants": {"allow": ["command(*)"]}},
  "agentShim": {"version": 1, "mode": "yolo", "profile": "full-access",
    "tools": {"allow": ["bash:**", "write_file:**", "read_file:**"]}}
}`

// checkout makes a git checkout with an overlay under the pinned home,
// and links out of it into protected paths.
func checkout(t *testing.T, dir string) (home, proj string) {
	t.Helper()
	home = filepath.Join(dir, "home")
	proj = filepath.Join(home, "src", "proj")
	for _, d := range []string{proj + "/.git/hooks", proj + "/.agents/config/permissions", proj + "/vendor/lib/.agents/config/permissions", proj + "/sub"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(home+"/.bashrc", []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{proj + "/rc": home + "/.bashrc", proj + "/homelink": home, proj + "/up": "../.."} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return home, proj
}

// hookCall runs one hook call of agent with tool and input from cwd; it
// returns the exit code and stdout.
func protHookCall(t *testing.T, agent, cfg, cwd, tool string, input map[string]any) (int, string, string) {
	t.Helper()
	event := "PreToolUse"
	if agent == "gemini-cli" {
		event = "BeforeTool"
	}
	data, err := json.Marshal(map[string]any{"session_id": "prot", "cwd": cwd, "hook_event_name": event, "tool_name": tool, "tool_input": input})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"agent-shim", "hook", agent, "--config", cfg}, bytes.NewReader(data), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// hookVerdict reads an agent's answer as allow, ask, deny or default;
// Codex and Gemini answer ask as a deny that says it needs approval.
func hookVerdict(t *testing.T, agent, out string) string {
	t.Helper()
	switch {
	case out == "" || strings.TrimSpace(out) == "{}":
		if agent == "codex" {
			return "allow-or-default"
		}
		return "default"
	case strings.Contains(out, "needs approval"):
		return "ask"
	}
	var v struct {
		Decision string `json:"decision"`
		H        struct {
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s answer %q: %v", agent, out, err)
	}
	if v.Decision != "" {
		return v.Decision
	}
	return v.H.PermissionDecision
}

var hookAgents = []struct {
	name               string
	shell, write, edit string
}{
	{"claude-code", "Bash", "Write", "Edit"},
	{"codex", "Bash", "apply_patch", "shell"},
	{"gemini-cli", "run_shell_command", "write_file", "replace"},
}

// TestHookProtected: under the most permissive policy, every protected
// path, however it is spelled, is asked through all three agents'
// protocols (Claude asks; Codex and Gemini, which cannot ask, refuse
// with a reason that says how to approve it).
func TestHookProtected(t *testing.T) {
	dir, cfg := testEnv(t, permissive)
	home, proj := checkout(t, dir)
	state := filepath.Join(dir, "xdg", "state", "agent-shim")
	lines := []string{
		"echo x >> .agents/config/permissions/read_only.txt",
		"echo x >> " + proj + "/.agents/config/permissions/read_only.txt",
		"echo x >> sub/../vendor/lib/.agents/config/permissions/read_only.txt",
		"echo '[core] fsmonitor = x' >> .git/config",
		"cd .git && echo x > hooks/pre-commit",
		"cd ~ && echo x >> .bashrc",
		"echo x >> rc",
		"echo x >> homelink/.zshrc",
		"echo x >> up/.profile",
		"tee -a ~/.bashrc < x",
		"cp evil .git/hooks/post-checkout",
		"ln -s ~/.bashrc x; echo y >> x",
		"git config core.fsmonitor evil",
		"echo {} > .claude/settings.local.json",
		"echo {} > .gemini/settings.json",
		"echo {} > .codex/hooks.json",
		"echo x > " + cfg,
		"echo x >> ~/.ssh/authorized_keys",
		"agents-setup --profile full-access",
	}
	paths := []string{
		".agents/config/permissions/read_only.txt", "vendor/lib/.agents/config/x.txt", "sub/../.git/config",
		".git/hooks/pre-push", ".gitattributes", "rc", "homelink/.bashrc", "up/.zshrc", home + "/.bashrc",
		".claude/settings.json", ".codex/config.toml", cfg, home + "/.ssh/config",
	}
	// The shim's state directory (approvals, tickets, session answers)
	// is never written by an agent, whoever would answer.
	stateLines := []string{
		"echo x > " + state + "/cache.key",
		"echo '{\"approvals\":[]}' > " + state + "/sessions/prot.json",
		"touch " + state + "/tickets/x.9999999999.00",
		"cp x " + state + "/approvals/ab.approved",
	}
	statePaths := []string{state + "/cache.key", state + "/sessions/prot.json", state + "/tickets/x", state + "/approvals/x.approved"}
	for _, ag := range hookAgents {
		check := func(what, tool string, input map[string]any, want string) {
			t.Helper()
			code, out, errOut := protHookCall(t, ag.name, cfg, proj, tool, input)
			if code != 0 {
				t.Errorf("%s %s: exit %d: %s", ag.name, what, code, errOut)
				return
			}
			if got := hookVerdict(t, ag.name, out); got != want && !(want == "allow" && got == "allow-or-default") {
				t.Errorf("%s %s: %s (%s), want %s", ag.name, what, got, strings.TrimSpace(out), want)
			}
		}
		for _, l := range lines {
			check(l, ag.shell, map[string]any{"command": l}, "ask")
		}
		for _, l := range stateLines {
			check(l, ag.shell, map[string]any{"command": l}, "deny")
		}
		check("echo x > notes.txt", ag.shell, map[string]any{"command": "echo x > notes.txt"}, "allow")
		for _, p := range append(paths, statePaths...) {
			want := "ask"
			if slices.Contains(statePaths, p) {
				want = "deny"
			}
			switch ag.name {
			case "claude-code":
				check("Write "+p, ag.write, map[string]any{"file_path": p, "content": "x"}, want)
				check("Edit "+p, ag.edit, map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}, want)
			case "codex":
				patch := "*** Begin Patch\n*** Update File: main.go\n@@\n+b\n*** Update File: " + p + "\n@@\n+x\n*** End Patch\n"
				check("apply_patch "+p, ag.write, map[string]any{"command": patch}, want)
				check("shell echo > "+p, ag.edit, map[string]any{"command": []string{"bash", "-lc", "echo x > " + p}}, want)
			case "gemini-cli":
				check("write_file "+p, ag.write, map[string]any{"file_path": p, "content": "x"}, want)
				check("replace "+p, ag.edit, map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}, want)
			}
		}
	}
}

// TestHookCommandNotString: a command that is null, a number, an object
// or an empty list is malformed input, exit 2 in every protocol; it is
// never the empty line that "runs nothing".
func TestHookCommandNotString(t *testing.T) {
	dir, cfg := testEnv(t, permissive)
	_, proj := checkout(t, dir)
	for _, ag := range hookAgents {
		for _, v := range []any{nil, 42, map[string]any{}, []string{}, true, []any{"ls", 1}, []string{"a\x00b"}} {
			code, out, errOut := protHookCall(t, ag.name, cfg, proj, ag.shell, map[string]any{"command": v})
			if code != 2 || out != "" || !strings.Contains(errOut, "malformed tool input") {
				t.Errorf("%s, command %#v: exit %d, stdout %q, stderr %q; want exit 2, malformed", ag.name, v, code, out, errOut)
			}
		}
	}
}

// TestSessionReplayed: a session answer the shim kept decides the
// session's next hook call. The file is trusted by where it is: that the
// agent's tools cannot write it is TestHookProtected's, that the tree
// cannot is TestTreeCannotForgeThePolicy's.
func TestSessionReplayed(t *testing.T) {
	dir, cfg := testEnv(t, `{"userSettings": {"globalPermissionGrants": {"ask": ["command(git push)"]}}}`)
	_, proj := checkout(t, dir)
	auditPath, err := approvals.Path(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	s := sessions.Of(auditPath, "prot")
	line := "git push origin main"
	verdict := func() string {
		_, out, _ := protHookCall(t, "claude-code", cfg, proj, "Bash", map[string]any{"command": line})
		return hookVerdict(t, "claude-code", out)
	}
	if got := verdict(); got != "ask" {
		t.Fatalf("before any answer: %s", got)
	}
	if err := s.Remember(context.Background(), gate.Request{Tool: "Bash", Key: line}, gate.AnswerSession); err != nil {
		t.Fatal(err)
	}
	if got := verdict(); got != "allow" {
		t.Errorf("session answer the shim kept: %s, want allow", got)
	}
}

// TestQuoteArgv: an argv quoted back into a line parses into the same
// words (syntax.Quote).
func TestQuoteArgv(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"git", "status"}, "git status"},
		{[]string{"env", "API_TOKEN=x", "make"}, "env 'API_TOKEN=x' make"},
		{[]string{"A=b", "c"}, "'A=b' c"},
		{[]string{"echo", "a=~/x"}, "echo 'a=~/x'"},
		{[]string{"echo", "it's", "$HOME", ""}, `echo "it's" '$HOME' ''`},
		{[]string{"bash", "-lc", "git push -f; rm -rf /"}, "bash -lc 'git push -f; rm -rf /'"},
		{[]string{"printf", "a\nb"}, `printf $'a\nb'`},
	} {
		t.Logf("input: %q", tc.in)
		got, err := gate.QuoteArgv(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("got %q, %v; want %q", got, err, tc.want)
		}
		words, err := shellparse.Fields(got)
		if err != nil || !slices.Equal(words, tc.in) {
			t.Errorf("%q reads back as %q, %v", got, words, err)
		}
	}
	if _, err := gate.QuoteArgv([]string{"echo", "a\x00b"}); err == nil {
		t.Errorf("a NUL byte: no error")
	}
}
