package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodes: a bad command line is 2; an agent not on PATH, or one
// with no hook installed, is red (1), with what to do. (Green is the e2e
// suite's: it needs the real agents.)
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '9.9.9 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "PATH": bin + ":/usr/bin:/bin"}
	t.Setenv("PATH", env["PATH"]) // exec.LookPath reads the process's
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{nil, exitUsage, "verify takes one agent"},
		{[]string{"cursor"}, exitUsage, `unknown agent "cursor"`},
		{[]string{"--nope", "codex"}, exitUsage, "flag provided but not defined"},
		{[]string{"codex"}, exitRed, "codex is not on PATH"},
		{[]string{"claude-code"}, exitRed, "FAIL  installed: " + env["HOME"] + "/.claude/settings.json is not there"},
	} {
		t.Logf("input: %q", tc.args)
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"agent-shim-verify"}, tc.args...), getenv, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("exit %d, want %d\n%s%s", code, tc.code, stdout.String(), stderr.String())
		}
		if out := stdout.String() + stderr.String(); !strings.Contains(out, tc.out) {
			t.Errorf("output lacks %q:\n%s", tc.out, out)
		}
	}
}
