//go:build unix

package tickets

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/locktest"
)

// The prune marker is opened without waiting on a FIFO planted in its
// place (a hook call would hang until its deadline) and never through a
// link (it would truncate and touch the file the link names).
func TestPruneMarkerPlanted(t *testing.T) {
	e, root := ticketEnv(t)
	proj := filepath.Join(root, "proj")
	tdir := filepath.Join(root, "state", "agent-shim", "tickets")
	if err := os.MkdirAll(tdir, 0o700); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(tdir, ".pruned")
	record := func() {
		t.Helper()
		var err error
		locktest.Within(t, 5*time.Second, func() {
			err = e.recordTicket(agents.Claude, hookCall("s", proj, "make"), gate.Decision{Verdict: gate.Ask})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(marker, 0o600); err != nil {
		t.Fatal(err)
	}
	record()
	os.Remove(marker)

	victim := filepath.Join(root, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(victim, old, old)
	if err := os.Symlink(victim, marker); err != nil {
		t.Fatal(err)
	}
	record()
	if data, _ := os.ReadFile(victim); string(data) != "keep" {
		t.Errorf("the file a link at the marker names was truncated: %q", data)
	}
	if fi, _ := os.Stat(victim); !fi.ModTime().Equal(old) {
		t.Errorf("the file a link at the marker names was touched: %v", fi.ModTime())
	}
}
