package decisionlog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestMarshalJSON holds the hand-written encoder to encoding/json's
// output, byte for byte, for entries with every field and every kind of
// character a command can hold.
func TestMarshalJSON(t *testing.T) {
	texts := []string{"", "git status", `a "quoted" \ back`, "tab\tnew\nline\rcr\x00\x1f\x7f bs\b ff\f",
		"<html> & </html>", "日本語 é", "bad \xff\xfe utf8", "sep \u2028 \u2029", strings.Repeat("x", 300)}
	for _, s := range texts {
		for _, e := range []Entry{
			{Time: time.Date(2026, 11, 30, 18, 0, 0, 123456789, time.UTC), Layer: LayerHook, Command: s, Verdict: "allow"},
			{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Agent: s, Session: s, Layer: s, Cwd: s, Tool: s,
				Command: s, Argv: []string{s, "x", s}, Verdict: s, Reason: s, Floor: s, Answer: s, Lost: 12,
				Rule: &Rule{Text: s, List: s, Category: s, Overlay: s, File: s, Line: 7}},
			{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Layer: LayerGate, Command: s, Verdict: "deny",
				Rule: &Rule{Text: s}},
		} {
			want, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendEntry(nil, &e); string(got) != string(want) {
				t.Errorf("%q:\n got %s\nwant %s", s, got, want)
			}
		}
	}
}

// FuzzMarshalJSON holds the hand encoder to encoding/json for any string.
func FuzzMarshalJSON(f *testing.F) {
	for _, s := range []string{"", "git status", "\b\f\x00\x7f", "<>&", "\xff", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Entry{Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Layer: s, Command: s, Argv: []string{s}, Verdict: s, Rule: &Rule{Text: s, Line: 1}}
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendEntry(nil, &e); string(got) != string(want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}
