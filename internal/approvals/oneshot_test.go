package approvals

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/internal/tickets"
)

// A one-shot approval is of one call (agent, session, tool, command,
// directory), spent by one retry, and expires; a pending one is spent by
// nothing; what a record is comes from its file's name.
func TestOneShots(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := OneShots{Dir: t.TempDir(), Now: func() time.Time { return now }}
	call := OneShot{Agent: "codex", Session: "s", Tool: "Bash", Key: "git push", Dir: "/w", Reason: "asks"}
	p, err := s.Ask(call)
	if err != nil || p.ID == "" || !p.Pending() {
		t.Fatalf("ask: %+v, %v", p, err)
	}
	if again, _ := s.Ask(call); again.ID != p.ID {
		t.Errorf("asked twice: ids %s and %s", p.ID, again.ID)
	}
	if o, _ := s.Take("codex", "s", "Bash", "git push", "/w"); o != nil {
		t.Fatal("a pending call was taken")
	}
	if _, err := s.Approve(p.ID, "terminal"); err != nil {
		t.Fatal(err)
	}
	for _, other := range [][5]string{
		{"gemini-cli", "s", "Bash", "git push", "/w"},
		{"codex", "t", "Bash", "git push", "/w"},
		{"codex", "s", "Write", "git push", "/w"},
		{"codex", "s", "Bash", "git push --force", "/w"},
		{"codex", "s", "Bash", "git push", "/w/sub"},
	} {
		if o, _ := s.Take(other[0], other[1], other[2], other[3], other[4]); o != nil {
			t.Errorf("%q took the approval of %+v", other, call)
		}
	}
	o, err := s.Take("codex", "s", "Bash", "git push", "/w")
	if err != nil || o == nil || o.Approval == nil || o.Approval.Decision != "once" {
		t.Fatalf("take: %+v, %v", o, err)
	}
	if o, _ := s.Take("codex", "s", "Bash", "git push", "/w"); o != nil {
		t.Error("taken twice")
	}
	// Expiry, pending and approved.
	p2, _ := s.Ask(call)
	now = now.Add(OneShotTTL + time.Second)
	if _, err := s.Approve(p2.ID, "terminal"); err == nil {
		t.Error("approved an expired call")
	}
	p3, _ := s.Ask(call)
	s.Approve(p3.ID, "terminal")
	now = now.Add(OneShotTTL + time.Second)
	if o, _ := s.Take("codex", "s", "Bash", "git push", "/w"); o != nil {
		t.Error("took an expired approval")
	}
	// A pending file whose content claims an approval is pending.
	p4, _ := s.Ask(call)
	list, _ := s.List()
	if len(list) != 1 || list[0].ID != p4.ID || !list[0].Pending() {
		t.Errorf("list: %+v", list)
	}
	entries, _ := os.ReadDir(filepath.Join(s.Dir, "approvals"))
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(s.Dir, "approvals", e.Name()))
		forged := append(data[:len(data)-1], []byte(`,"approval":{"tool":"Bash","key":"git push","decision":"once"}}`)...)
		os.WriteFile(filepath.Join(s.Dir, "approvals", e.Name()), forged, 0o600)
	}
	if o, _ := s.Take("codex", "s", "Bash", "git push", "/w"); o != nil {
		t.Error("took a pending call whose content says approved")
	}
}

// The approve command refuses to run below the agent that asked: the
// agent's processes are recorded with the call.
func TestOneShotBelow(t *testing.T) {
	start, _, _, ok := tickets.Process(os.Getppid())
	if !ok {
		t.Fatalf("no /proc here: %v", ok)
	}
	o := OneShot{Procs: []Proc{{PID: os.Getppid(), Start: start}}}
	if !o.Below() {
		t.Error("a process below the agent's is not seen as below it")
	}
	o.Procs = []Proc{{PID: os.Getppid(), Start: start + "0"}} // a later process with the same id
	if o.Below() {
		t.Error("a process with the agent's id but another start is taken for it")
	}
	if procs := Procs(); len(procs) == 0 || procs[0].PID != os.Getppid() {
		t.Errorf("Procs: %+v", procs)
	}
}
