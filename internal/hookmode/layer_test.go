package hookmode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/tickets"
)

// The hook reads a call as it will run under the run-time layer only when
// it knows it will, from what install and agent-shim run wrote: the
// agent's process recorded by agent-shim run among the hook's ancestors,
// or the agent's shell variable naming this program with the layer on and
// available. Not from the call's input: a call that says so is read
// statically.
func TestHookUnderLayer(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	cfg := filepath.Join(dir, "config.json")
	write := func(runtime string) {
		os.WriteFile(cfg, []byte(`{"userSettings":{"globalPermissionGrants":{"allow":["command(echo)"]}},"agentShim":{"version":1,"profile":"local-changes","rules":[],"runtime":"`+runtime+`"}}`), 0o600)
	}
	write("on")
	state := filepath.Join(dir, "state", "agent-shim")
	self := filepath.Join(dir, "agent-shim")
	os.WriteFile(self, []byte("x"), 0o755)
	other := filepath.Join(dir, "bash")
	os.WriteFile(other, []byte("x"), 0o755)
	const line = "python3 -c 'print(1)'"
	call := fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%q,"runtime":"on","layer":true}}`, proj, line)
	hook := func(env map[string]string, avail bool) string {
		t.Helper()
		env["HOME"], env["XDG_STATE_HOME"] = filepath.Join(dir, "home"), filepath.Join(dir, "state")
		var out bytes.Buffer
		o := Options{Agent: agents.Claude, Config: cfg, Getenv: func(k string) string { return env[k] },
			Tickets: tickets.Store{Dir: state}, Warn: &bytes.Buffer{},
			Self:      func() (string, error) { return self, nil },
			Available: func() (bool, string) { return avail, "test" }}
		if err := Call(context.Background(), o, strings.NewReader(call), &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	allowed := func(out string) bool { return strings.Contains(out, `"allow"`) }
	if out := hook(map[string]string{}, true); allowed(out) {
		t.Errorf("nothing says the layer runs (the call's input does): %s", out)
	}
	if out := hook(map[string]string{"CLAUDE_CODE_SHELL": self}, true); !allowed(out) {
		t.Errorf("shell mode is the agent's shell, the layer on: %s", out)
	}
	if out := hook(map[string]string{"CLAUDE_CODE_SHELL": other}, true); allowed(out) {
		t.Errorf("the agent's shell is another program: %s", out)
	}
	if out := hook(map[string]string{"CLAUDE_CODE_SHELL": self}, false); allowed(out) {
		t.Errorf("the layer is unavailable here: %s", out)
	}
	write("off")
	if out := hook(map[string]string{"CLAUDE_CODE_SHELL": self}, true); allowed(out) {
		t.Errorf("agentShim.runtime is off: %s", out)
	}
	// agent-shim run, found among the hook's ancestors.
	start, _, _, ok := tickets.Process(os.Getppid())
	if !ok {
		t.Fatal("no /proc")
	}
	os.MkdirAll(filepath.Join(state, "runs"), 0o700)
	os.WriteFile(filepath.Join(state, "runs", strconv.Itoa(os.Getppid())+"."+start), nil, 0o600)
	if out := hook(map[string]string{}, true); !allowed(out) {
		t.Errorf("under agent-shim run: %s", out)
	}
}
