package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 31, "approvals as data": an approval covers the exact argv the
// person saw, where the line runs it. The person approves `git push origin
// feature`; a pre-push hook planted earlier runs `git push <other> HEAD:x
// git push origin feature`, whose argv ends with the approved words. The
// hook's push is refused at run time, the approved push runs. (Harmless:
// two bare repositories in the temporary directory.)
func TestRuntimeApprovalNotASuffix(t *testing.T) {
	r, bare := gitRT(t, "local-changes")
	other := filepath.Join(r.dir, "tmp", "other.git")
	for _, args := range [][]string{
		{"init", "-q", "--bare", "-b", "main", other},
		{"-C", r.proj, "remote", "add", "origin", bare},
		// Branches named as the words the hook pushes, so that every
		// refspec of its push is valid.
		{"-C", r.proj, "branch", "feature"}, {"-C", r.proj, "branch", "git"},
		{"-C", r.proj, "branch", "push"}, {"-C", r.proj, "branch", "origin"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ran := filepath.Join(r.dir, "tmp", "hook-ran")
	hook := "#!/bin/sh\n[ -e " + ran + " ] && exit 0\ntouch " + ran + "\ngit push -q " + other + " HEAD:x git push origin feature\necho status=$? >> " + ran + "\nexit 0\n"
	if err := os.WriteFile(filepath.Join(r.proj, ".git", "hooks", "pre-push"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	tty := filepath.Join(r.dir, "tty-y")
	if err := os.WriteFile(tty, []byte("y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	openTTY = func() (io.ReadWriteCloser, error) { return openFakeTTY(tty) }
	code, _, stderr := shellRun(context.Background(), "git push origin feature")
	if pushed(t, other) {
		t.Fatalf("the planted hook pushed to %s under the approval of `git push origin feature` (exit %d):\n%s", other, code, stderr)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("the hook did not run: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "denied at run time") || !strings.Contains(stderr, "covers its own commands only") {
		t.Errorf("exit %d; stderr does not name the refusal:\n%s", code, stderr)
	}
	out, _ := exec.Command("git", "-C", bare, "for-each-ref", "--format=%(refname)").CombinedOutput()
	if !strings.Contains(string(out), "refs/heads/feature") {
		t.Errorf("the approved push did not run: %s\n%s", out, stderr)
	}
}

// Issue 31, "one reading of an argv": a runner whose command a server
// outside the tree runs is decided at run time exactly as statically. A
// script of the checkout (which the static reading cannot see into) runs
// `tmux new-window 'touch …'`: statically an ask, so at run time tmux's
// execution is refused and nothing reaches a server. Before, tmux's own
// argv had no rule at run time and ran. The tmux run here is a stand-in
// that would touch a marker; with a real tmux, a server started outside
// the tree would have run the payload.
func TestRuntimeHandOffOneReading(t *testing.T) {
	r := newRT(t, "local-changes")
	bin := filepath.Join(r.dir, "tmp", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(r.dir, "tmp", "ran")
	stand := "#!/bin/sh\necho \"$@\" >> " + marker + "\n"
	for _, name := range []string{"tmux", "screen"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(stand), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	for _, tc := range []struct{ name, script, want string }{
		{"new-window", "tmux new-window 'touch " + marker + "-payload'", "tmux new-window runs a shell command"},
		{"send-keys", "tmux send-keys -t 0 'touch " + marker + "-payload' Enter", "tmux send-keys runs a shell command"},
		{"screen-stuff", "screen -S s -X stuff 'touch " + marker + "-payload\\n'", "screen"},
		{"through-sh", "sh -c \"tmux new-window 'touch " + marker + "-payload'\"", "tmux new-window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(marker)
			r.file(t, "run.sh", tc.script+"\ntouch after\n")
			os.Remove(filepath.Join(r.proj, "after"))
			code, _, stderr := shellRun(context.Background(), "bash run.sh")
			if _, err := os.Stat(marker); err == nil {
				data, _ := os.ReadFile(marker)
				t.Fatalf("%s ran at run time with %q (exit %d):\n%s", tc.name, data, code, stderr)
			}
			if !strings.Contains(stderr, "denied at run time") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d; stderr does not say %q:\n%s", code, tc.want, stderr)
			}
			if !r.exists("after") {
				t.Errorf("the script stopped:\n%s", stderr)
			}
		})
	}
	// What reaches no server runs: tmux ls is nothing but a listing.
	os.Remove(marker)
	r.file(t, "ls.sh", "tmux ls\n")
	if code, _, stderr := shellRun(context.Background(), "bash ls.sh"); code != 0 {
		t.Errorf("tmux ls: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("tmux ls did not run: %v", err)
	}
}
