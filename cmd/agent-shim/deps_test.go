package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies guards what agent-shim links: it runs on every tool
// call, so it stays a small static binary. No cgo (a static binary with no
// libc to load), no os/user or net (both pull in cgo resolvers and
// package initialisation paid on every start), no go-git and no
// urfave/cli (agents-setup's, tens of packages of init work).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{len .CgoFiles}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{"runtime/cgo", "os/user", "net", "github.com/go-git/", "github.com/urfave/cli"}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 20 {
		t.Fatalf("go list -deps listed %d packages:\n%s", len(lines), out)
	}
	for _, l := range lines {
		pkg, cgo, _ := strings.Cut(l, " ")
		if cgo != "0" {
			t.Errorf("%s has cgo files", pkg)
		}
		for _, f := range forbidden {
			if pkg == f || strings.HasSuffix(f, "/") && strings.HasPrefix(pkg, f) || pkg == strings.TrimSuffix(f, "/") ||
				f == "net" && strings.HasPrefix(pkg, "net/") || f == "github.com/urfave/cli" && strings.HasPrefix(pkg, f) {
				t.Errorf("agent-shim depends on %s", pkg)
			}
		}
	}
}
