package gate

import (
	"context"
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
