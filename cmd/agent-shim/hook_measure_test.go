//go:build measure

package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestHookCostFuchsia measures a Claude Code hook call whole-process
// with Fuchsia's own manifests (internal/policycheck/testdata/fuchsia, a
// jiri checkout with its vendor/google overlay) applied by agents-setup at
// local-changes, against the minimal Go hook (testdata/minhook: decode,
// parse and walk the command, print an answer), in paired runs: one call
// the policy allows (`git status`) and one it leaves to the agent (`git
// status && go test ./...`, Default: the hook also leaves a ticket for
// shell mode). It fails when the median of the paired CPU ratios of
// either is over 1.6 (issue 30). Run it with
//
//	go test -tags measure -run TestHookCostFuchsia -v ./cmd/agent-shim -hookcost 300
//
// Both binaries are copied before they run: a file the linker has just
// written through a mapping is slower to start, page for page, than the
// same bytes written or read in again (about 10% of a hook call here),
// and an installed binary is the latter.
func TestHookCostFuchsia(t *testing.T) {
	dir := t.TempDir()
	// The person's login shell, which Claude Code's hooks inherit: not
	// shell mode, so the hook leaves no ticket for it.
	env := append(pinnedEnv(dir), "SHELL=/bin/bash")
	shim := copied(t, buildBinary(t, dir, "agent-shim"))
	setup := buildBinary(t, dir, "agents-setup")
	minhook := filepath.Join(dir, "minhook")
	build := exec.Command("go", "build", "-o", minhook, "./testdata/minhook")
	build.Env = origEnv
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the minimal hook: %v\n%s", err, out)
	}
	minhook = copied(t, minhook)

	ck := filepath.Join(dir, "fuchsia")
	if err := os.CopyFS(ck, os.DirFS(filepath.Join("..", "..", "internal", "policycheck", "testdata", "fuchsia"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ck, ".jiri_root"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, repo := range []string{ck, filepath.Join(ck, "vendor", "google")} {
		if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
			t.Fatalf("git init %s: %v\n%s", repo, err, out)
		}
	}
	cmd := exec.Command(setup, "--root", ck, "--profile", "local-changes")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agents-setup: %v\n%s", err, out)
	}

	run := func(input, name string, args ...string) time.Duration {
		c := exec.Command(name, args...)
		c.Env = env
		in, err := os.Open(input)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		c.Stdin = in
		if out, err := c.Output(); err != nil {
			t.Fatalf("%s: %v: %s", name, err, out)
		}
		return c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	}
	for _, tc := range []struct{ command, want string }{
		{"git status", `"allow"`},
		{"git status && go test ./...", ""},
	} {
		input := filepath.Join(dir, "input.json")
		call := fmt.Sprintf(`{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":"t1"}`, ck, tc.command)
		if err := os.WriteFile(input, []byte(call), 0o600); err != nil {
			t.Fatal(err)
		}
		c := exec.Command(shim, "hook", "claude-code")
		c.Env, c.Stdin = env, strings.NewReader(call)
		out, err := c.Output()
		if err != nil || tc.want != "" && !strings.Contains(string(out), tc.want) || tc.want == "" && len(out) > 0 {
			t.Fatalf("%s: %v: %q, want %q", tc.command, err, out, tc.want)
		}
		for range 20 { // warm up the page cache and the compact copy
			run(input, shim, "hook", "claude-code")
			run(input, minhook)
		}
		var a, b, r []float64
		for range *hookCost {
			x, y := run(input, shim, "hook", "claude-code"), run(input, minhook)
			a, b = append(a, x.Seconds()*1e3), append(b, y.Seconds()*1e3)
			if y > 0 {
				r = append(r, x.Seconds()/y.Seconds())
			}
		}
		med := func(xs []float64) float64 { xs = slices.Clone(xs); slices.Sort(xs); return xs[len(xs)/2] }
		t.Logf("%-30s hook %.2f ms cpu, minimal hook %.2f ms: %.2fx (median of %d paired ratios)", tc.command, med(a), med(b), med(r), len(r))
		if med(r) > 1.6 {
			t.Errorf("%s: the hook takes %.2f times the minimal hook's CPU, want at most 1.6", tc.command, med(r))
		}
	}
}

// copied writes a copy of the binary at path beside it and returns the
// copy's path (see TestHookCostFuchsia).
func copied(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := path + ".copy"
	if err := os.WriteFile(cp, data, fs.FileMode(0o755)); err != nil {
		t.Fatal(err)
	}
	return cp
}
