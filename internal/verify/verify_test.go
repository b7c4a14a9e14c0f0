package verify

import (
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/agents"
)

// TestRehome: every hook command of ours in the settings runs the new
// shim, a --config it named becomes the checks' config.json, and the
// person's other hooks and bytes stay.
func TestRehome(t *testing.T) {
	a := agents.Claude
	in := `{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Edit", "hooks": [{"type": "command", "command": "my-linter --fix"}]},
      {"matcher": "*", "hooks": [{"type": "command", "command": ` + q(a.HookCommand("/usr/local/bin/agent-shim", "/etc/policy.json")) + `, "timeout": 30, "onFailure": "block"}]}
    ],
    "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": ` + q(a.HookCommand("/usr/local/bin/agent-shim", "")) + `, "timeout": 30}]}]
  },
  "model": "x"
}
`
	out, err := rehome(a, "settings.json", []byte(in), "/tmp/v/bin/agent-shim", "/tmp/v/config.json")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		q(a.HookCommand("/usr/local/bin/agent-shim", "/etc/policy.json")), q(a.HookCommand("/tmp/v/bin/agent-shim", "/tmp/v/config.json")),
		q(a.HookCommand("/usr/local/bin/agent-shim", "")), q(a.HookCommand("/tmp/v/bin/agent-shim", "")),
	).Replace(in)
	if string(out) != want {
		t.Errorf("rehome gave\n%s\nwant\n%s", out, want)
	}
	// The shim kept: only a --config moves.
	out, err = rehome(a, "settings.json", []byte(in), "", "/tmp/v/config.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "/usr/local/bin/agent-shim hook claude-code --config /tmp/v/config.json") ||
		strings.Contains(string(out), "/etc/policy.json") || !strings.Contains(string(out), `"command": "/usr/local/bin/agent-shim hook claude-code"`) {
		t.Errorf("rehome with the shim kept gave\n%s", out)
	}
}

func q(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
