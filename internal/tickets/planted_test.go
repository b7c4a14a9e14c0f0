//go:build unix

package tickets

import (
	"os"
	"path/filepath"
	"strconv"
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

// The hook finds `agent-shim run` among its ancestors by the record of
// its process (pid and start time), and by nothing else: a record of
// another start of the same pid, or none, is not it.
func TestUnderRun(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if s.UnderRun() {
		t.Fatal("under a run with no record")
	}
	start, _, _, ok := Process(os.Getppid())
	if !ok {
		t.Fatal("no /proc")
	}
	runs := filepath.Join(s.Dir, "runs")
	os.MkdirAll(runs, 0o700)
	stale := filepath.Join(runs, strconv.Itoa(os.Getppid())+"."+start+"1")
	os.WriteFile(stale, nil, 0o600)
	if s.UnderRun() {
		t.Error("a record of another process with the parent's id counts")
	}
	treeLog, done, err := s.RecordRun() // this process: a descendant's ancestor, not its own
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(treeLog); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		t.Errorf("the tree's log %s: %v %v", treeLog, fi, err)
	}
	if s.UnderRun() {
		t.Error("this process's own record counts for itself")
	}
	if _, ok := s.RunLog(); ok {
		t.Error("this process's own tree log counts for itself")
	}
	done()
	if entries, _ := os.ReadDir(runs); len(entries) != 1 {
		t.Errorf("the record and its log were not removed: %v", entries)
	}
	parent := filepath.Join(runs, strconv.Itoa(os.Getppid())+"."+start)
	os.WriteFile(parent, nil, 0o600)
	if !s.UnderRun() {
		t.Error("the parent's record is not found")
	}
	if _, ok := s.RunLog(); ok {
		t.Error("a tree log that is not there is found")
	}
	os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), parent+".log")
	if _, ok := s.RunLog(); ok {
		t.Error("a link at the tree log is taken for it")
	}
	os.Remove(parent + ".log")
	os.WriteFile(parent+".log", nil, 0o600)
	if got, ok := s.RunLog(); !ok || got != parent+".log" {
		t.Errorf("the parent's tree log: %q %v", got, ok)
	}
}
