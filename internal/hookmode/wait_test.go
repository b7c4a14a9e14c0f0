//go:build unix

package hookmode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/locktest"
	"github.com/agent-shim/agent-shim/internal/sessions"
	"github.com/agent-shim/agent-shim/internal/tickets"
	"github.com/agent-shim/agent-shim/statefile"
)

func TestMain(m *testing.M) {
	locktest.Main()
	os.Exit(m.Run())
}

// Another process holds the session file's lock. The hook answers a
// call it asks about as it would with the lock free, within its wait for
// the lock (the record of the asked call is lost, with a warning), and
// its post-tool-use call records nothing, warns and ends well (the call
// ran already: never a block). Before, both waited up to 30 s.
func TestSessionLockHeld(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(`{"userSettings":{"globalPermissionGrants":{"allow":[],"ask":["command(git push)"],"deny":[]}},"agentShim":{"version":1,"profile":"local-changes","rules":[]}}`), 0o600)
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_STATE_HOME": filepath.Join(dir, "state")}
	getenv := func(k string) string { return env[k] }
	call := func(event, id string) string {
		return fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":%q,"tool_name":"Bash","tool_use_id":%q,"tool_input":{"command":"git push origin main"}}`, proj, event, id)
	}
	hook := func(in string) (answer, warning string, err error) {
		var out, warn bytes.Buffer
		o := Options{Agent: agents.Claude, Config: cfg, Getenv: getenv, Tickets: tickets.Store{Dir: filepath.Join(dir, "state", "agent-shim")}, Warn: &warn}
		took := locktest.Within(t, 5*time.Second, func() { err = Call(context.Background(), o, strings.NewReader(in), &out) })
		if took > time.Second {
			t.Errorf("the hook took %v", took)
		}
		return out.String(), warn.String(), err
	}
	// Lock free: the asked call is recorded, its post-tool-use call
	// records the approval.
	free, _, err := hook(call("PreToolUse", "a"))
	if err != nil || !strings.Contains(free, `"ask"`) {
		t.Fatalf("lock free: answered %q, %v", free, err)
	}
	if _, _, err := hook(call("PostToolUse", "a")); err != nil {
		t.Fatal(err)
	}
	auditPath, _ := approvals.Path(getenv)
	if got, err := approvals.ReadFile(auditPath); len(got) != 1 || err != nil {
		t.Fatalf("lock free: approvals %v, %v; want one", got, err)
	}

	sess := sessions.Of(auditPath, "s1")
	locktest.Hold(t, statefile.LockPath(sess.Path))
	held, warning, err := hook(call("PreToolUse", "b"))
	if err != nil || held != free {
		t.Errorf("lock held: answered %q, %v; want %q as with the lock free", held, err, free)
	}
	if !strings.Contains(warning, "warning") {
		t.Errorf("lock held: no warning that the asked call was not recorded (%q)", warning)
	}
	out, warning, err := hook(call("PostToolUse", "a"))
	if err != nil || out != "" || !strings.Contains(warning, "recording the approval") {
		t.Errorf("post-tool-use with the lock held: %v, answer %q, warning %q; want no error, no answer, a warning", err, out, warning)
	}
}
