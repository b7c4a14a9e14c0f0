package gate

import (
	"flag"
	"os"
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
