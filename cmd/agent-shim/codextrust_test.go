package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestCodexHookHash holds codexHookHash and codexHookKey to what Codex
// 0.169.0 itself reported: `codex app-server`, hooks/list over this
// hooks.json in CODEX_HOME=/tmp/ishim/ch/home, gave these keys and
// currentHash values (trustStatus "untrusted").
func TestCodexHookHash(t *testing.T) {
	const hooksJSON = `{"hooks": {"PreToolUse": [` +
		`{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 pre.py", "timeout": 10}]}, ` +
		`{"hooks": [{"type": "command", "command": "out=$(timeout -k 2 20 '/opt/a b/agent-shim' hook codex) && printf '%s\\n' \"$out\" || { echo 'agent-shim failed: blocking' >&2; exit 2; }", "timeout": 30}]}, ` +
		`{"hooks": [{"type": "command", "command": "/x/agent-shim hook codex <&>"}]}, ` +
		`{"matcher": "*", "hooks": [{"type": "command", "command": "é\u2028\u0001\t", "timeout": 0, "statusMessage": "hi"}]}]}}`
	want := []struct{ key, hash string }{
		{"/tmp/ishim/ch/home/hooks.json:pre_tool_use:0:0", "sha256:75da8da1a7f7e58256dd513c58f88f24f08f6e2268eca89394bda493a71a9c9d"},
		{"/tmp/ishim/ch/home/hooks.json:pre_tool_use:1:0", "sha256:4c1df94422b0290e5dca98448474bdfc6af628dc333654c02c6dd008b5fcc667"},
		{"/tmp/ishim/ch/home/hooks.json:pre_tool_use:2:0", "sha256:12ffac467d6f7fa78d8560f2a247684e54d03a65fb0e153f63d666349e9017d2"},
		{"/tmp/ishim/ch/home/hooks.json:pre_tool_use:3:0", "sha256:a434a2a6daba07880d4edbe50c9a92f3a431b9a2c5c7883a6562fc045bff00cd"},
	}
	var f struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Command       string  `json:"command"`
				Timeout       *int64  `json:"timeout"`
				Async         bool    `json:"async"`
				StatusMessage *string `json:"statusMessage"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(hooksJSON), &f); err != nil {
		t.Fatal(err)
	}
	groups := f.Hooks["PreToolUse"]
	if len(groups) != len(want) {
		t.Fatalf("%d groups, want %d", len(groups), len(want))
	}
	for i, g := range groups {
		h := g.Hooks[0]
		t.Logf("input: %q", h.Command)
		if got := codexHookKey("/tmp/ishim/ch/home/hooks.json", "PreToolUse", i, 0); got != want[i].key {
			t.Errorf("key %d = %q, want %q", i, got, want[i].key)
		}
		got := codexHookHash("PreToolUse", g.Matcher, codexHandler{h.Command, h.Timeout, h.Async, h.StatusMessage})
		if got != want[i].hash {
			t.Errorf("hash %d = %s, want %s", i, got, want[i].hash)
		}
	}
}

func TestCodexEventLabel(t *testing.T) {
	for in, want := range map[string]string{
		"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "SessionStart": "session_start",
		"UserPromptSubmit": "user_prompt_submit", "Stop": "stop", "PermissionRequest": "permission_request",
	} {
		if got := codexEventLabel(in); got != want {
			t.Errorf("codexEventLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// With CODEX_HOME set, Codex canonicalizes it: the trust key names the
// directory with its links resolved. Without it, ~/.codex as it is.
func TestCodexKeyPath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	hooks := filepath.Join(link, "hooks.json")
	if got := codexKeyPath(env(map[string]string{"CODEX_HOME": link}), hooks); got != filepath.Join(real, "hooks.json") {
		t.Errorf("CODEX_HOME set: %q, want the link resolved", got)
	}
	if got := codexKeyPath(env(map[string]string{"HOME": dir}), hooks); got != hooks {
		t.Errorf("CODEX_HOME unset: %q, want %q", got, hooks)
	}
}
