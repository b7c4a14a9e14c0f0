package gate

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/google/go-cmp/cmp"
)

// entries is a decisionlog.Logger that keeps what it is given.
type entries struct {
	mu  sync.Mutex
	got []decisionlog.Entry
}

func (e *entries) Log(en decisionlog.Entry) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, en)
}

// Every decision of the Check methods reaches Options.Decisions, with the
// person's answer; the Decide methods log nothing.
func TestCheckLogsDecisions(t *testing.T) {
	log := &entries{}
	p := &scripted{answer: func(r Request) Answer {
		if r.Key == "git push origin main" {
			return AnswerOnce
		}
		return AnswerNo
	}}
	g := New(Options{Policy: testPolicy(), Prompter: p, Decisions: log, Agent: "host", Session: "s1",
		Dir: "/work", Now: func() time.Time { return fixed }})
	ctx := context.Background()
	if err := g.checkBash(ctx, "git status"); err != nil {
		t.Fatal(err)
	}
	if err := g.checkBash(ctx, "curl http://x"); !errors.Is(err, ErrDenied) {
		t.Fatalf("curl: %v", err)
	}
	if err := g.checkBash(ctx, "git push origin main"); err != nil {
		t.Fatal(err)
	}
	if err := g.checkBash(ctx, "npm publish"); !errors.Is(err, ErrDenied) {
		t.Fatalf("npm publish: %v", err)
	}
	g.DecideBash("git status")
	var got []string
	for _, en := range log.got {
		if en.Layer != decisionlog.LayerGate || en.Agent != "host" || en.Session != "s1" || en.Cwd != "/work" || en.Tool != "Bash" || !en.Time.Equal(fixed) || en.Reason == "" {
			t.Errorf("entry lacks its context: %+v", en)
		}
		got = append(got, en.Command+" "+en.Verdict+" "+en.Answer)
	}
	want := []string{"git status allow ", "curl http://x deny ", "git push origin main ask once", "npm publish ask no"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("logged (-want +got):\n%s", diff)
	}
}
