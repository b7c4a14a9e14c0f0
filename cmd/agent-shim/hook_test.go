package main

import (
	"bytes"
	"testing"
)

// TestClaudeAnswer: the answer spelled out is what encoding/json writes
// of the structs, for reasons with every character JSON escapes.
func TestClaudeAnswer(t *testing.T) {
	for _, reason := range []string{"", "matches an allow rule: `git status` (x.txt:1)", "a && b > c < d",
		"quote \" back \\ tab \t nl \n nul \x00 bs \b ff \f", "bad \xff utf8", "sep \u2028", "日本"} {
		for _, decision := range []string{"allow", "ask", "deny"} {
			var got, want bytes.Buffer
			if err := claudeAnswer(&got, decision, reason); err != nil {
				t.Fatal(err)
			}
			if err := writeLine(&want, claudeOutput{claudeDecision{"PreToolUse", decision, "agent-shim: " + reason}}); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%s %q:\n got %s\nwant %s", decision, reason, got.String(), want.String())
			}
		}
	}
}
