package gate

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateNever = flag.Bool("update", false, "write gate/never.sections from the never-allow list")

// TestNeverSections holds the embedded never-allow sections to the list
// in never.go: a change to one without the other fails here.
func TestNeverSections(t *testing.T) {
	want := neverSectionsText()
	if *updateNever {
		if err := os.WriteFile("never.sections", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if neverText != want {
		t.Fatalf("never.sections is not the never-allow list's sections: go test -run TestNeverSections -update ./gate")
	}
	if n := neverSections().count; n != len(neverLines) {
		t.Errorf("never.sections holds %d rules, the list %d", n, len(neverLines))
	}
}

// TestNeverSectionsIndex: each section's text, sliced from the embedded
// list, is that section's lines and no other, and the count is the list's.
func TestNeverSectionsIndex(t *testing.T) {
	want := map[string]string{}
	rules := 0
	for _, line := range strings.SplitAfter(neverText, "\n") {
		kind, after, _ := strings.Cut(line, "\t")
		name, _, _ := strings.Cut(after, "\t")
		name, _ = unfield(name)
		if kind == "rule" {
			rules++
		}
		if kind == "rule" || kind == "section" {
			want[name] += line
		}
	}
	ns := neverSections()
	if len(ns.text) != len(want) || ns.count != rules || rules != len(neverLines) {
		t.Fatalf("%d sections, %d rules; want %d, %d (%d lines)", len(ns.text), ns.count, len(want), rules, len(neverLines))
	}
	for name, text := range want {
		if ns.text[name] != text {
			t.Errorf("section %q:\n got %q\nwant %q", name, ns.text[name], text)
		}
	}
}
