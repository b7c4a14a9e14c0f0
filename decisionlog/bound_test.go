package decisionlog

import (
	"strings"
	"testing"
	"time"
)

// TestMarshalBounded: every field of an entry is cut to a bound, so that a
// line stays small whatever the agent sends (a megabyte cwd, session id or
// tool name), and it is cut before redaction: a huge command costs no
// more than a bounded one.
func TestMarshalBounded(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	e := Entry{
		Time: time.Unix(1, 0), Agent: big, Session: big, Layer: big, Cwd: "/" + big, Tool: big,
		Command: strings.Repeat("TOKEN=abc ", 1<<20), Argv: []string{big, big, big}, Verdict: big,
		Reason: big, Floor: big, Answer: big,
		Rule: &Rule{Text: big, List: big, Category: big, Overlay: big, File: big, Line: 3},
	}
	start := time.Now()
	line, err := Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Marshal took %v", d)
	}
	// maxCommand three times (command, argv, rule), maxReason twice,
	// maxCwd, 10 small fields, and the markers and keys.
	limit := 3*maxCommand + 2*maxReason + maxCwd + 10*maxField + 1024
	if len(line) > limit {
		t.Errorf("line of %d bytes, want at most %d", len(line), limit)
	}
	if e.Rule.Text != big {
		t.Error("Marshal changed the caller's rule")
	}
}

// TestPrecutKeepsSecretsMasked: a cut before redaction that falls inside a
// secret drops the secret's word whole; no beginning of it is logged.
func TestPrecutKeepsSecretsMasked(t *testing.T) {
	secret := "hunter2hunter2hunter2"
	for _, pad := range []int{2*maxCommand - 30, 2*maxCommand - 20, 2*maxCommand - 12, 2*maxCommand - 5} {
		// Secrets before it shrink when masked: without the back-off the
		// cut word would land well inside the final bound.
		unit := "TOKEN=" + strings.Repeat("v", 57) + " "
		prefix := strings.Repeat(unit, pad/len(unit))
		prefix += strings.Repeat("a", pad-len(prefix)-1)
		cmd := prefix + " curl https://user:" + secret + "@example.com/x"
		t.Logf("input: %d bytes, cut at %d", len(cmd), 2*maxCommand)
		line, err := Marshal(Entry{Command: cmd})
		if err != nil {
			t.Fatal(err)
		}
		for i := 4; i <= len(secret); i++ {
			if strings.Contains(string(line), "user:"+secret[:i]) {
				t.Errorf("pad %d: %q of the password logged", pad, secret[:i])
				break
			}
		}
	}
}
