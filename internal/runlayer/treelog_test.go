package runlayer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/decisionlog"
)

type entries []decisionlog.Entry

func (l *entries) Log(e decisionlog.Entry) { *l = append(*l, e) }

// TestTakeTreeLog: what the tree wrote to its log is taken in as hook
// entries marked as its word; lines that are not hook decisions (a
// forged run-time entry, garbage) are left out and counted, and a link
// at the log's place is not followed.
func TestTakeTreeLog(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.log")
	hook, err := decisionlog.Marshal(decisionlog.Entry{Layer: decisionlog.LayerHook, Agent: "claude-code", Tool: "Bash", Command: "git push --force", Verdict: "deny", Lost: 7})
	if err != nil {
		t.Fatal(err)
	}
	shell, _ := decisionlog.Marshal(decisionlog.Entry{Layer: decisionlog.LayerShell, Agent: "shell", Command: "make", Verdict: "allow"})
	forged, _ := decisionlog.Marshal(decisionlog.Entry{Layer: decisionlog.LayerRuntime, Tool: "execve", Command: "rm -rf /", Verdict: "allow"})
	data := string(hook) + string(shell) + string(forged) + "not json\n\n" + `{"layer":"hook"}` + "\n"
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	var got entries
	var stderr strings.Builder
	r := &Run{TreeLog: p, Log: &got, Stderr: &stderr}
	r.TakeTreeLog()
	if len(got) != 2 || got[0].Command != "git push --force" || !got[0].Tree || got[0].Lost != 0 || got[1].Command != "make" || !got[1].Tree {
		t.Errorf("taken in: %+v", got)
	}
	if !strings.Contains(stderr.String(), "3 line(s)") {
		t.Errorf("the left-out lines were not counted: %q", stderr.String())
	}
	// A link in the log's place.
	os.Remove(p)
	os.Symlink(filepath.Join(dir, "elsewhere"), p)
	os.WriteFile(filepath.Join(dir, "elsewhere"), hook, 0o600)
	got = nil
	r.TakeTreeLog()
	if len(got) != 0 {
		t.Errorf("a link was followed: %+v", got)
	}
}
