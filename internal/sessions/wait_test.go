//go:build unix

package sessions

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/locktest"
	"github.com/agent-shim/agent-shim/statefile"
)

func TestMain(m *testing.M) {
	locktest.Main()
	os.Exit(m.Run())
}

// While another process holds a lock, every write on the decision path
// gives up within its own bound: the hook's record of an asked call
// (AskWait), shell mode's session answer (RememberWait), an "always"
// answer into config.json (ConfigWait). Before, each waited 30 s.
func TestLocksHeld(t *testing.T) {
	dir := t.TempDir()
	s := Of(filepath.Join(dir, "approvals.jsonl"), "s1")
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(`{"agentShim":{"version":1}}`), 0o600)
	ctx := context.Background()
	tests := []struct {
		name  string
		lock  string
		limit time.Duration
		write func() error
	}{
		{"ask", s.Path, AskWait, func() error { return s.Ask(ctx, AskedCall{Tool: "Bash", Key: "ls", Time: time.Now()}) }},
		{"remember", s.Path, RememberWait, func() error {
			return s.Remember(ctx, gate.Request{Tool: "Bash", Key: "ls"}, gate.AnswerSession)
		}},
		{"always", cfg, ConfigWait, func() error { return PersistGrant(ctx, cfg, "bash", "ls") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.write(); err != nil {
				t.Fatalf("lock free: %v", err)
			}
			release := locktest.Hold(t, statefile.LockPath(tc.lock))
			var err error
			took := locktest.Within(t, 10*time.Second, func() { err = tc.write() })
			if err == nil {
				t.Error("written under another process's lock")
			}
			if took > tc.limit+500*time.Millisecond {
				t.Errorf("took %v, bound %v", took, tc.limit)
			}
			t.Logf("gave up after %v: %v", took, err)
			release()
		})
	}
	if AskWait > 20*time.Millisecond || RememberWait > 50*time.Millisecond || ConfigWait > time.Second {
		t.Errorf("bounds %v, %v, %v: over 20ms, 50ms, 1s", AskWait, RememberWait, ConfigWait)
	}
}
