//go:build make

package main

import (
	"os/exec"
	"testing"
)

// A deny command in a Makefile recipe is refused when make runs it, as
// TestRuntimeDeny's are. Behind the build tag make, which .ci/run sets:
// there make is needed, and its absence fails the test.
func TestRuntimeDenyMake(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed (apt-get install make): %v", err)
	}
	runtimeDeny(t, []runtimeDenyCase{
		{"make", "make -s all"},
		{"make-sh", "make -s sh"},
		{"make-env", "make -s env"},
	})
}
