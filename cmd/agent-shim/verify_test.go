package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyExec: agent-shim verify runs agent-shim-verify from beside
// itself with its arguments and exits as it does; without it, exit 1 and
// how to get it.
func TestVerifyExec(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "agent-shim")
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	old := executable
	executable = func() (string, error) { return exe, nil }
	t.Cleanup(func() { executable = old })

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"agent-shim", "verify", "codex"}, strings.NewReader(""), &stdout, &stderr); code != exitError ||
		!strings.Contains(stderr.String(), "verify needs agent-shim-verify beside agent-shim") {
		t.Errorf("without agent-shim-verify: exit %d, %q", code, stderr.String())
	}

	script := "#!/bin/sh\necho \"args: $*\"\nexit 7\n"
	if err := os.WriteFile(filepath.Join(dir, verifierName), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"agent-shim", "verify", "--json", "codex"}, strings.NewReader(""), &stdout, &stderr); code != 7 ||
		stdout.String() != "args: --json codex\n" {
		t.Errorf("with agent-shim-verify: exit %d, %q %q", code, stdout.String(), stderr.String())
	}
}
