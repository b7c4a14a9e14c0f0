package report

import (
	"strings"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
)

// TestLogMarksTree: an entry agent-shim run took from its tree is told
// from the others in the log's table.
func TestLogMarksTree(t *testing.T) {
	var b strings.Builder
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	Log(&b, []decisionlog.Entry{
		{Time: at, Layer: decisionlog.LayerHook, Command: "git status", Verdict: "allow"},
		{Time: at, Layer: decisionlog.LayerHook, Command: "git push --force", Verdict: "deny", Tree: true},
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "run's tree") || !strings.Contains(lines[1], "hook (run's tree)") {
		t.Errorf("log table:\n%s", b.String())
	}
}
