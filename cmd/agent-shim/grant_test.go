package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// sayYes answers y to every question on the terminal.
func (r *rt) sayYes(t *testing.T) {
	t.Helper()
	tty := filepath.Join(r.dir, "tty-yes")
	if err := os.WriteFile(tty, []byte(strings.Repeat("y\n", 16)), 0o600); err != nil {
		t.Fatal(err)
	}
	openTTY = func() (io.ReadWriteCloser, error) { return openFakeTTY(tty) }
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// A line a person approved may write, under the layer, the paths the line
// itself says it writes, where they exist; nothing else gains from the
// approval: not a path its script writes, not a line that is not approved.
func TestRuntimeApprovedWrites(t *testing.T) {
	r := newRT(t, "local-changes")
	approved, other := filepath.Join(r.outside, "approved.txt"), filepath.Join(r.outside, "other.txt")
	for _, p := range []string{approved, other} {
		if err := os.WriteFile(p, []byte("before\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.file(t, "other.sh", "echo script > "+other+"\n")
	r.file(t, "same.sh", "echo script > "+approved+"\n")
	r.sayYes(t)

	// Not approved (a script: nothing asks): refused, and said.
	code, _, stderr := shellRun(context.Background(), "bash same.sh")
	if readFile(approved) != "before\n" || code == 0 || !strings.Contains(stderr, "refused a write to "+approved) {
		t.Errorf("an unapproved line wrote %s (exit %d):\n%s", approved, code, stderr)
	}
	// Approved: the line's own write runs; its script's write elsewhere
	// does not.
	code, _, stderr = shellRun(context.Background(), "echo approved > "+approved+"; bash other.sh")
	if got := readFile(approved); got != "approved\n" {
		t.Errorf("the approved write: %q (exit %d):\n%s", got, code, stderr)
	}
	if got := readFile(other); got != "before\n" {
		t.Errorf("a script of the approved line wrote %s: %q", other, got)
	}
	// What the approval does not lend, it says: a file not made yet, a
	// directory that holds the home directory.
	home := filepath.Join(r.dir, "home")
	r.file(t, "x.txt", "x\n")
	for _, tc := range []struct{ line, file, why string }{
		{"echo x > " + filepath.Join(r.outside, "new.txt"), filepath.Join(r.outside, "new.txt"), "does not exist yet"},
		{"cp x.txt " + r.dir, filepath.Join(r.dir, "x.txt"), r.dir + " holds the home directory"},
	} {
		code, _, stderr = shellRun(context.Background(), tc.line)
		if _, err := os.Lstat(tc.file); err == nil || code == 0 {
			t.Errorf("%q wrote %s (exit %d):\n%s", tc.line, tc.file, code, stderr)
		}
		if !strings.Contains(stderr, "agent-shim: note: the approval of the line does not let it write here under the run-time layer: ") || !strings.Contains(stderr, tc.why) {
			t.Errorf("%q: stderr does not say why (%s):\n%s", tc.line, tc.why, stderr)
		}
	}
	if _, err := os.Lstat(filepath.Join(home, "x.txt")); err == nil {
		t.Errorf("the home directory was written")
	}
}

// An approved line that runs sudo (here a stand-in on PATH that runs its
// arguments) keeps the supervisor's capabilities and is not confined; the
// same command unapproved has none. A supervisor that cannot lend them
// refuses the line, and runs nothing unsupervised.
func TestRuntimeApprovedPrivileged(t *testing.T) {
	r := newRT(t, "local-changes")
	bin := filepath.Join(r.dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "sudo"), []byte("#!/bin/sh\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	outsideFile := filepath.Join(r.outside, "priv.txt")
	line := "sudo grep CapEff /proc/self/status > caps.txt; sudo sh -c 'echo x > " + outsideFile + "'"
	r.file(t, "caps.sh", line+"\n")
	capEff := func() string {
		s := strings.TrimSpace(strings.TrimPrefix(readFile(filepath.Join(r.proj, "caps.txt")), "CapEff:"))
		os.Remove(filepath.Join(r.proj, "caps.txt"))
		return s
	}
	code, _, stderr := shellRun(context.Background(), "bash caps.sh")
	if got := capEff(); got != "0000000000000000" {
		t.Errorf("unapproved sudo: CapEff %q (exit %d):\n%s", got, code, stderr)
	}
	if _, err := os.Lstat(outsideFile); err == nil {
		t.Errorf("unapproved sudo wrote outside the scope")
	}

	r.sayYes(t)
	if os.Geteuid() == 0 {
		code, _, stderr = shellRun(context.Background(), line)
		if got := capEff(); code != 0 || got == "" || got == "0000000000000000" {
			t.Errorf("approved sudo as root: CapEff %q (exit %d):\n%s", got, code, stderr)
		}
		if _, err := os.Lstat(outsideFile); err != nil {
			t.Errorf("approved sudo was confined: %v\n%s", err, stderr)
		}
		os.Remove(outsideFile)
	}

	// As a supervisor without CAP_SYS_ADMIN would answer.
	old := superviseRun
	t.Cleanup(func() { superviseRun = old })
	var got supervisor.Config
	superviseRun = func(_ context.Context, c supervisor.Config) (supervisor.Status, error) {
		got = c
		if c.Grant.Privileged {
			return supervisor.Status{}, supervisor.ErrPrivileged
		}
		return supervisor.Status{}, nil
	}
	code, _, stderr = shellRun(context.Background(), line)
	if code != 126 || !strings.Contains(stderr, "agent-shim: error: the approved line runs a program that gains privileges") ||
		!strings.Contains(stderr, "agent-shim: hint: run the line yourself, outside the agent") {
		t.Errorf("exit %d, want the refusal:\n%s", code, stderr)
	}
	if !got.Grant.Privileged || got.Confine {
		t.Errorf("the supervisor was given %+v, confine %v", got.Grant, got.Confine)
	}
	if _, err := os.Lstat(filepath.Join(r.proj, "caps.txt")); err == nil {
		t.Errorf("the refused line ran")
	}
}
