//go:build zsh

package main

import (
	"os/exec"
	"testing"
)

// The zsh lines of TestShellWrappers are zsh: checked with zsh -n (syntax
// only). Behind the build tag zsh, which .ci/run sets: there zsh is
// needed, and its absence fails the test.
func TestShellZshSyntax(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Fatalf("zsh is needed (apt-get install zsh): %v", err)
	}
	for _, l := range []string{`ls *(e:"rm -rf ~":)`, "echo *(+f)", "cat =(rm -rf build)"} {
		if out, err := exec.Command(zsh, "-n", "-c", l).CombinedOutput(); err != nil {
			t.Errorf("zsh -n %q: %v: %s", l, err, out)
		}
	}
}
