package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoGitTransports keeps go-git's top-level package, and with it the
// ssh, http and openpgp transports, out of the binary: their package
// initialization and size are paid by every run, hook runs included.
// manifest reads repositories through go-git's storage packages instead.
func TestNoGitTransports(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/go-git/go-git/v5" ||
			strings.HasPrefix(pkg, "github.com/go-git/go-git/v5/plumbing/transport") ||
			strings.Contains(pkg, "openpgp") || strings.HasPrefix(pkg, "golang.org/x/crypto/ssh") {
			t.Errorf("agents-setup links %s", pkg)
		}
	}
}
