package gate

import (
	"context"
	"github.com/agent-shim/agent-shim/matcher"
	"strings"
	"testing"
)

func TestTerminalPrompter(t *testing.T) {
	req := Request{Kind: KindOutsideScope, Tool: "Read", Key: "/etc/hosts", Reason: "read of /etc/hosts, outside the scope",
		Always: Grant{Pattern: "/etc/hosts"}}
	tests := []struct {
		in   string
		want Answer
	}{
		{"y\n", AnswerOnce},
		{"YES\n", AnswerOnce},
		{"s\n", AnswerSession},
		{" t \n", AnswerTool},
		{"a\n", AnswerAlways},
		{"n\n", AnswerNo},
		{"\n", AnswerNo},
		{"", AnswerNo},             // end of input: nobody answered
		{"maybe\ny\n", AnswerOnce}, // asked again
		{"x\nx\nx\ny\n", AnswerNo}, // three wrong answers
		{"a", AnswerAlways},        // no final newline
	}
	for _, tc := range tests {
		var out strings.Builder
		p := NewTerminalPrompter(strings.NewReader(tc.in), &out)
		got, err := p.AskApproval(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("input %q: got %v, want %v", tc.in, got, tc.want)
		}
		if strings.Contains(out.String(), "agent-shim") {
			t.Errorf("input %q: the library's prompt names a program:\n%s", tc.in, out.String())
		}
		if !strings.HasPrefix(out.String(), "Read, path outside the scope: /etc/hosts\n") ||
			!strings.Contains(out.String(), "always (saves path /etc/hosts)") {
			t.Errorf("input %q: prompt:\n%s", tc.in, out.String())
		}
	}
}

// The broad answers say what they let through before the person picks
// them, and a narrower one is offered beside them: approving every git
// command for the session lets git push through, which the policy asks
// about, and the prompt says so; approving `git remote …` (c) does not.
func TestScopedAnswers(t *testing.T) {
	p := matcherPolicy(t, map[string][]string{
		"ask":   {"git push", "git commit", "command(git remote add)", "curl"},
		"allow": {"git status"},
	})
	g := New(Options{Policy: p, Scope: NewScope("/w"), Dir: "/w"})
	d := g.DecideBash("git remote -v")
	if d.Verdict != Default || d.Request == nil {
		t.Fatalf("git remote -v: %v (%s)", d.Verdict, d.Reason)
	}
	req := *d.Request
	var out strings.Builder
	a, err := NewTerminalPrompter(strings.NewReader("c\n"), &out).AskApproval(context.Background(), req)
	if err != nil || a != AnswerCommand {
		t.Fatalf("answer %v, %v", a, err)
	}
	prompt := out.String()
	t.Logf("prompt:\n%s", prompt)
	for _, want := range []string{
		"c  every `git remote …` command, for the session — including git remote add, which the policy asks about",
		"t  every git command, for the session — including git commit, git push, git remote add, which the policy asks about",
		"allow? [y/s/c/t/a/N]",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt does not say %q", want)
		}
	}
	if err := g.Apply(req, a); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]Verdict{
		"git remote -v":            Allow,
		"git -C sub remote show x": Allow,
		"git push origin main":     Ask,
		"git commit -m x":          Ask,
		"git remote add o url":     Allow, // what c said it includes
		"git fetch":                Default,
	} {
		if d := g.DecideBash(line); d.Verdict != want {
			t.Errorf("after c on `git remote -v`: %q is %v (%s), want %v", line, d.Verdict, d.Reason, want)
		}
	}
	// The broad answer does what it said.
	g2 := New(Options{Policy: p, Scope: NewScope("/w"), Dir: "/w"})
	if err := g2.Apply(*g2.DecideBash("git remote -v").Request, AnswerTool); err != nil {
		t.Fatal(err)
	}
	if d := g2.DecideBash("git push origin main"); d.Verdict != Allow {
		t.Errorf("after t: git push is %v, which the prompt said t includes", d.Verdict)
	}
	if d := g2.DecideBash("curl x"); d.Verdict != Ask {
		t.Errorf("after t on git: curl is %v", d.Verdict)
	}
}

// matcherPolicy builds a policy from rules by list ("allow", "ask",
// "deny").
func matcherPolicy(t *testing.T, rules map[string][]string) *matcher.Policy {
	t.Helper()
	p := matcher.New()
	for list, texts := range rules {
		d, err := matcher.ParseDecision(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range texts {
			p.Add(d, r, matcher.Source{})
		}
	}
	return p
}
