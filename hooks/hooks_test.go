package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/google/go-cmp/cmp"
)

// setupEnv pins HOME, the XDG directories and git's global configuration to
// temporary files, and clears git's per-repository variables (the tests may
// themselves run inside a hook). Tests that call it cannot be parallel.
func setupEnv(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"} {
		t.Setenv(v, filepath.Join(dir, strings.ToLower(v)))
	}
	global := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(global, []byte("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	for _, v := range localEnvVars {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
}

// newRepo makes an empty repository with go-git.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := gogit.PlainInit(dir, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

// gitT runs the real git in dir.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// fakeGit makes the hooks code see git at version v.
func fakeGit(t *testing.T, v version) {
	t.Helper()
	old := gitVersion
	gitVersion = func(context.Context) (version, error) { return v, nil }
	t.Cleanup(func() { gitVersion = old })
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// snapshot maps every file under dir to its mode and content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		b, err := os.ReadFile(path)
		m[rel] = fi.Mode().String() + " " + string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var testCommand = []string{"/opt/agent shim/agents-setup", "hooks", "run", "--"}

func states(reports []Report) []string {
	var s []string
	for _, r := range reports {
		for _, h := range r.Hooks {
			s = append(s, filepath.Base(r.Repo)+" "+h.Event+": "+h.State.String())
		}
	}
	return s
}

func actions(changes []Change) []string {
	var s []string
	for _, c := range changes {
		s = append(s, filepath.Base(c.Path)+": "+c.Action)
	}
	return s
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    version
		wantErr bool
	}{
		{in: "git version 2.39.5", want: version{2, 39, 5}},
		{in: "git version 2.54.0\n", want: version{2, 54, 0}},
		{in: "git version 2.54.0.rc1", want: version{2, 54, 0}},
		{in: "git version 2.55.0-rc0", want: version{2, 55, 0}},
		{in: "git version 2.45.1.windows.1", want: version{2, 45, 1}},
		{in: "git version 2.39.5 (Apple Git-154)", want: version{2, 39, 5}},
		{in: "git version 3.0", want: version{3, 0, 0}},
		{in: "git version 2", wantErr: true},
		{in: "version 2.39.5", wantErr: true},
		{in: "git version x.y", wantErr: true},
		{in: "", wantErr: true},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		t.Logf("input: %q", tc.in)
		got, err := parseVersion(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseVersion(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && got != tc.want {
			t.Errorf("parseVersion(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !(version{2, 53, 9}).less(configHooksSince) || (version{2, 54, 0}).less(configHooksSince) || (version{3, 0, 0}).less(configHooksSince) {
		t.Errorf("version comparison around %v is wrong", configHooksSince)
	}
}

func TestCommandLine(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	tests := []struct {
		in   []string
		want string
	}{
		{in: []string{"/usr/bin/agents-setup", "hooks", "run", "--"}, want: "/usr/bin/agents-setup hooks run --"},
		{in: []string{"/opt/a b/agents-setup", "run"}, want: "'/opt/a b/agents-setup' run"},
		{in: []string{"it's", "$HOME", "`x`", ""}, want: `'it'\''s' '$HOME' '` + "`x`" + `' ''`},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		got := CommandLine(tc.in)
		if got != tc.want {
			t.Errorf("CommandLine(%q) = %s, want %s", tc.in, got, tc.want)
		}
		// The shell reads it back as the same words.
		out, err := exec.Command("sh", "-c", "set -- "+got+`; for a in "$@"; do printf '[%s]' "$a"; done`).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		for _, a := range tc.in {
			want += "[" + a + "]"
		}
		if string(out) != want {
			t.Errorf("sh reads %s as %s, want %s", got, out, want)
		}
	}
}

func TestInstallScript(t *testing.T) {
	setupEnv(t)
	fakeGit(t, version{2, 39, 5})
	root, overlay := newRepo(t), newRepo(t)
	opts := Options{Repos: []string{root, overlay}, Command: testCommand, StateDir: t.TempDir()}
	ctx := context.Background()

	reports, err := Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	base := func(d string) string { return filepath.Base(d) }
	wantMissing := []string{
		base(root) + " post-checkout: missing", base(root) + " post-merge: missing", base(root) + " post-rewrite: missing",
		base(overlay) + " post-checkout: missing", base(overlay) + " post-merge: missing", base(overlay) + " post-rewrite: missing",
	}
	if diff := cmp.Diff(wantMissing, states(reports)); diff != "" {
		t.Errorf("status before install (-want +got):\n%s", diff)
	}

	changes, err := Install(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"post-checkout: installed", "post-merge: installed", "post-rewrite: installed", "post-checkout: installed", "post-merge: installed", "post-rewrite: installed"}
	if diff := cmp.Diff(want, actions(changes)); diff != "" {
		t.Errorf("install (-want +got):\n%s", diff)
	}
	for _, dir := range opts.Repos {
		for _, event := range hookEvents {
			path := filepath.Join(dir, ".git", "hooks", event)
			if got, want := readFile(t, path), string(script(event, CommandLine(testCommand))); got != want {
				t.Errorf("%s:\n%s\nwant:\n%s", path, got, want)
			}
			if !isExecutable(path) {
				t.Errorf("%s is not executable", path)
			}
			if err := exec.Command("sh", "-n", path).Run(); err != nil {
				t.Errorf("sh -n %s: %v", path, err)
			}
		}
	}
	reports, err = Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.State() != Installed || r.Method != Script {
			t.Errorf("status %s: %v by %v, want installed by script: %+v", r.Repo, r.State(), r.Method, r.Hooks)
		}
	}

	// Reinstalling changes nothing, byte for byte.
	before := snapshot(t, filepath.Join(root, ".git"))
	changes, err = Install(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"post-checkout: unchanged", "post-merge: unchanged", "post-rewrite: unchanged", "post-checkout: unchanged", "post-merge: unchanged", "post-rewrite: unchanged"}
	if diff := cmp.Diff(want, actions(changes)); diff != "" {
		t.Errorf("reinstall (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, snapshot(t, filepath.Join(root, ".git"))); diff != "" {
		t.Errorf("reinstall changed .git (-before +after):\n%s", diff)
	}

	changes, err = Uninstall(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"post-checkout: removed", "post-merge: removed", "post-rewrite: removed", "post-checkout: removed", "post-merge: removed", "post-rewrite: removed"}
	if diff := cmp.Diff(want, actions(changes)); diff != "" {
		t.Errorf("uninstall (-want +got):\n%s", diff)
	}
	reports, err = Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantMissing, states(reports)); diff != "" {
		t.Errorf("status after uninstall (-want +got):\n%s", diff)
	}
}

func TestInstallChainsOriginal(t *testing.T) {
	setupEnv(t)
	fakeGit(t, version{2, 39, 5})
	ctx := context.Background()
	repo := newRepo(t)
	work := t.TempDir()
	calls := filepath.Join(work, "calls")

	// The original hook records its arguments and fails with 3; it is
	// group-executable only, to see the mode come back.
	hook := filepath.Join(repo, ".git", "hooks", "post-checkout")
	original := "#!/bin/sh\necho \"original $*\" >>'" + calls + "'\nexit 3\n"
	writeFile(t, hook, original, 0o750)
	// Our command records its arguments and fails with 7.
	ours := filepath.Join(work, "ours.sh")
	writeFile(t, ours, "#!/bin/sh\necho \"ours $*\" >>'"+calls+"'\nexit 7\n", 0o755)

	opts := Options{Repos: []string{repo}, Command: []string{ours}, StateDir: t.TempDir()}
	changes, err := Install(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"post-checkout: installed; the hook that was there moved to " + hook + origSuffix + " and runs first",
		"post-merge: installed",
		"post-rewrite: installed",
	}
	if diff := cmp.Diff(want, actions(changes)); diff != "" {
		t.Errorf("install (-want +got):\n%s", diff)
	}
	if got := readFile(t, hook+origSuffix); got != original {
		t.Errorf("moved-aside hook = %q, want %q", got, original)
	}
	reports, err := Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Base(repo) + " post-checkout: installed, foreign hook chained", filepath.Base(repo) + " post-merge: installed", filepath.Base(repo) + " post-rewrite: installed"}, states(reports)); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	// Run the installed hook the way git does: both parts run, the
	// original first, and the original's status is the hook's.
	runHook := func(path string, args ...string) int {
		t.Helper()
		cmd := exec.Command(path, args...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("running %s: %v\n%s", path, err, out)
		}
		return 0
	}
	if code := runHook(hook, "aaa", "bbb", "1"); code != 3 {
		t.Errorf("hook exit status = %d, want the original's 3", code)
	}
	if got, want := readFile(t, calls), "original aaa bbb 1\nours aaa bbb 1\n"; got != want {
		t.Errorf("calls = %q, want %q", got, want)
	}
	// post-merge had no original: our failure does not fail it.
	if code := runHook(filepath.Join(repo, ".git", "hooks", "post-merge"), "0"); code != 0 {
		t.Errorf("post-merge exit status = %d, want 0 though our command failed", code)
	}
	// An original that succeeds makes the chain succeed though ours failed.
	writeFile(t, hook+origSuffix, "#!/bin/sh\nexit 0\n", 0o750)
	if code := runHook(hook, "a", "b", "1"); code != 0 {
		t.Errorf("hook exit status = %d, want 0", code)
	}
	writeFile(t, hook+origSuffix, original, 0o750)

	// Reinstall leaves the chain alone.
	before := snapshot(t, filepath.Join(repo, ".git", "hooks"))
	if _, err := Install(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, snapshot(t, filepath.Join(repo, ".git", "hooks"))); diff != "" {
		t.Errorf("reinstall changed the hooks (-before +after):\n%s", diff)
	}

	// Uninstall puts the original back byte for byte, mode too.
	changes, err = Uninstall(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"post-checkout: restored the original hook", "post-merge: removed", "post-rewrite: removed"}
	if diff := cmp.Diff(want, actions(changes)); diff != "" {
		t.Errorf("uninstall (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(hook)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, hook); got != original || fi.Mode().Perm() != 0o750 {
		t.Errorf("restored hook = %v %q, want %v %q", fi.Mode().Perm(), got, os.FileMode(0o750), original)
	}
	for _, p := range []string{hook + origSuffix, filepath.Join(repo, ".git", "hooks", "post-merge")} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after uninstall: %v", p, err)
		}
	}
}

func TestInstallSymlinkedOriginal(t *testing.T) {
	setupEnv(t)
	fakeGit(t, version{2, 39, 5})
	ctx := context.Background()
	repo := newRepo(t)
	hook := filepath.Join(repo, ".git", "hooks", "post-merge")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../tools/merge-hook", hook); err != nil {
		t.Fatal(err)
	}
	opts := Options{Repos: []string{repo}, Command: testCommand}
	if _, err := Install(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(hook + origSuffix); err != nil || target != "../../tools/merge-hook" {
		t.Errorf("moved-aside link = %q, %v", target, err)
	}
	if _, err := Uninstall(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(hook); err != nil || target != "../../tools/merge-hook" {
		t.Errorf("restored link = %q, %v", target, err)
	}
}

func TestInstallRefusesSecondOriginal(t *testing.T) {
	setupEnv(t)
	fakeGit(t, version{2, 39, 5})
	ctx := context.Background()
	root, overlay := newRepo(t), newRepo(t)
	// In the overlay, someone replaced our hook while the hook we moved
	// aside still waits: moving the new one aside would lose the old one.
	hook := filepath.Join(overlay, ".git", "hooks", "post-checkout")
	writeFile(t, hook, "#!/bin/sh\necho jiri\n", 0o755)
	writeFile(t, hook+origSuffix, "#!/bin/sh\necho mine\n", 0o755)
	before := map[string]map[string]string{root: snapshot(t, filepath.Join(root, ".git")), overlay: snapshot(t, filepath.Join(overlay, ".git"))}
	state := t.TempDir()
	for _, force := range []bool{false, true} {
		_, err := Install(ctx, Options{Repos: []string{root, overlay}, Command: testCommand, StateDir: state, Force: force})
		if err == nil || !strings.Contains(err.Error(), hook+origSuffix) {
			t.Errorf("Install(force=%v) error = %v, want one naming %s", force, err, hook+origSuffix)
		}
	}
	for dir, snap := range before {
		if diff := cmp.Diff(snap, snapshot(t, filepath.Join(dir, ".git"))); diff != "" {
			t.Errorf("refused install changed %s (-before +after):\n%s", dir, diff)
		}
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("refused install wrote a record: %v", entries)
	}
}

func TestInstallHooksPath(t *testing.T) {
	setupEnv(t)
	fakeGit(t, version{2, 39, 5})
	ctx := context.Background()

	// core.hooksPath naming the repository's own hooks directory is fine.
	own := newRepo(t)
	gitT(t, own, "config", "core.hooksPath", ".git/hooks")
	if _, err := Install(ctx, Options{Repos: []string{own}, Command: testCommand}); err != nil {
		t.Fatalf("install with own core.hooksPath: %v", err)
	}
	if _, err := os.Stat(filepath.Join(own, ".git", "hooks", "post-checkout")); err != nil {
		t.Error(err)
	}

	// A tracked .githooks directory is foreign: refused, nothing written.
	repo := newRepo(t)
	gitT(t, repo, "config", "core.hooksPath", ".githooks")
	writeFile(t, filepath.Join(repo, ".githooks", "pre-commit"), "#!/bin/sh\n", 0o755)
	state := t.TempDir()
	opts := Options{Repos: []string{own, repo}, Command: testCommand, StateDir: state}
	before := snapshot(t, filepath.Join(repo, ".githooks"))
	_, err := Install(ctx, opts)
	if !errors.Is(err, ErrForeignHooksPath) {
		t.Fatalf("Install error = %v, want ErrForeignHooksPath", err)
	}
	if !strings.Contains(err.Error(), filepath.Join(repo, ".githooks")) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("error %q does not name the directory and --force", err)
	}
	if diff := cmp.Diff(before, snapshot(t, filepath.Join(repo, ".githooks"))); diff != "" {
		t.Errorf("refused install wrote (-before +after):\n%s", diff)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("refused install wrote a record: %v", entries)
	}
	reports, err := Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := reports[1].Hooks[0]; got.State != Missing || !strings.Contains(got.Detail, "--force") {
		t.Errorf("status = %+v, want missing with a --force hint", got)
	}

	// --force installs there.
	opts.Force = true
	if _, err := Install(ctx, opts); err != nil {
		t.Fatal(err)
	}
	for _, event := range hookEvents {
		if got := readFile(t, filepath.Join(repo, ".githooks", event)); !isOurs([]byte(got)) {
			t.Errorf("%s in .githooks is not ours: %q", event, got)
		}
	}
	reports, err = Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if reports[1].State() != Installed {
		t.Errorf("status after --force: %+v", reports[1])
	}
	// Uninstall needs no force: it only removes what is ours.
	opts.Force = false
	if _, err := Uninstall(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, snapshot(t, filepath.Join(repo, ".githooks"))); diff != "" {
		t.Errorf("uninstall left (-before +after):\n%s", diff)
	}
}

func TestInstallLinkedWorktree(t *testing.T) {
	setupEnv(t)
	fakeGit(t, version{2, 39, 5})
	ctx := context.Background()
	main := newRepo(t)
	gitT(t, main, "commit", "--allow-empty", "-q", "-m", "first")
	wt := filepath.Join(t.TempDir(), "wt")
	gitT(t, main, "worktree", "add", "-q", wt)

	if _, err := Install(ctx, Options{Repos: []string{wt}, Command: testCommand}); err != nil {
		t.Fatal(err)
	}
	// Linked worktrees share the main repository's hooks.
	for _, event := range hookEvents {
		if got := readFile(t, filepath.Join(main, ".git", "hooks", event)); !isOurs([]byte(got)) {
			t.Errorf("%s in the common hooks directory is not ours", event)
		}
	}
	if _, err := os.Stat(filepath.Join(main, ".git", "worktrees", "wt", "hooks")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("hooks written into the worktree's private git dir: %v", err)
	}
	reports, err := Status(ctx, Options{Repos: []string{main, wt}, Command: testCommand})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.State() != Installed {
			t.Errorf("status %s = %v", r.Repo, r.State())
		}
	}
}

func TestStatusStaleAndRemoved(t *testing.T) {
	setupEnv(t)
	fakeGit(t, version{2, 39, 5})
	ctx := context.Background()
	repo := newRepo(t)
	opts := Options{Repos: []string{repo}, Command: testCommand, StateDir: t.TempDir()}
	hook := filepath.Join(repo, ".git", "hooks", "post-checkout")
	merge := filepath.Join(repo, ".git", "hooks", "post-merge")
	writeFile(t, hook, "#!/bin/sh\necho user\n", 0o755)
	if _, err := Install(ctx, opts); err != nil {
		t.Fatal(err)
	}

	status := func() []HookReport {
		t.Helper()
		reports, err := Status(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		return reports[0].Hooks
	}

	// A newer agents-setup at another path: stale until reinstalled.
	newer := Options{Repos: opts.Repos, Command: []string{"/usr/bin/agents-setup", "hooks", "run", "--"}, StateDir: opts.StateDir}
	reports, err := Status(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	if got := states(reports); !cmp.Equal(got, []string{filepath.Base(repo) + " post-checkout: stale", filepath.Base(repo) + " post-merge: stale", filepath.Base(repo) + " post-rewrite: stale"}) {
		t.Errorf("status with another command = %v", got)
	}
	changes, err := Install(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"post-checkout: updated", "post-merge: updated", "post-rewrite: updated"}, actions(changes)); diff != "" {
		t.Errorf("install over stale (-want +got):\n%s", diff)
	}
	if got := readFile(t, hook+origSuffix); got != "#!/bin/sh\necho user\n" {
		t.Errorf("update lost the chained original: %q", got)
	}
	opts = newer

	// Not executable: git would skip it.
	if err := os.Chmod(merge, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := status()[1]; got.State != Stale {
		t.Errorf("non-executable hook: %+v", got)
	}

	// jiri update deleted post-merge (recorded) and overwrote post-checkout
	// (recorded, and the original still moved aside).
	os.Remove(merge)
	writeFile(t, hook, "#!/bin/sh\necho jiri\n", 0o755)
	got := status()
	if got[0].State != Removed || !strings.Contains(got[0].Detail, "replaced") || !strings.Contains(got[0].Detail, hook+origSuffix) {
		t.Errorf("overwritten hook: %+v", got[0])
	}
	if got[1].State != Removed || !strings.Contains(got[1].Detail, "deleted") {
		t.Errorf("deleted hook: %+v", got[1])
	}
	// Without the record, the moved-aside original still tells.
	opts.StateDir = ""
	got = status()
	if got[0].State != Removed || got[1].State != Missing {
		t.Errorf("without a record: %+v", got)
	}
}

func TestInstallConfig(t *testing.T) {
	setupEnv(t)
	ctx := context.Background()
	root, overlay := newRepo(t), newRepo(t)
	opts := Options{Repos: []string{root, overlay}, Command: testCommand, StateDir: t.TempDir()}
	command := CommandLine(testCommand)

	// Installed by script under old git first, with a user's hook chained.
	fakeGit(t, version{2, 39, 5})
	user := "#!/bin/sh\necho user\n"
	writeFile(t, filepath.Join(root, ".git", "hooks", "post-checkout"), user, 0o755)
	if _, err := Install(ctx, opts); err != nil {
		t.Fatal(err)
	}

	// git 2.54: the configuration takes over and the scripts go.
	fakeGit(t, version{2, 54, 0})
	reports, err := Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.Method != Config || r.State() != Stale {
			t.Errorf("status under 2.54 with scripts left: %v %v %+v", r.Method, r.State(), r.Hooks)
		}
	}
	changes, err := Install(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	suffix := " (git 2.54.0 runs hook.agents-setup from the configuration)"
	want := []string{
		"hook.agents-setup: installed", "post-checkout: restored the original hook" + suffix, "post-merge: removed" + suffix, "post-rewrite: removed" + suffix,
		"hook.agents-setup: installed", "post-checkout: removed" + suffix, "post-merge: removed" + suffix, "post-rewrite: removed" + suffix,
	}
	if diff := cmp.Diff(want, actions(changes)); diff != "" {
		t.Errorf("install (-want +got):\n%s", diff)
	}
	for _, dir := range opts.Repos {
		if got := gitT(t, dir, "config", "--local", "--get-all", "hook.agents-setup.event"); got != "post-checkout\npost-merge\npost-rewrite" {
			t.Errorf("%s: hook.agents-setup.event = %q", dir, got)
		}
		if got := gitT(t, dir, "config", "--local", "--get-all", "hook.agents-setup.command"); got != command {
			t.Errorf("%s: hook.agents-setup.command = %q, want %q", dir, got, command)
		}
	}
	if got := readFile(t, filepath.Join(root, ".git", "hooks", "post-checkout")); got != user {
		t.Errorf("user's hook = %q, want it back: git runs it beside the configured one", got)
	}
	reports, err = Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.State() != Installed {
			t.Errorf("status %s = %v %+v", r.Repo, r.State(), r.Hooks)
		}
	}

	// Reinstall: no change, the config file byte for byte.
	cfg := filepath.Join(root, ".git", "config")
	before := readFile(t, cfg)
	changes, err = Install(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"hook.agents-setup: unchanged", "hook.agents-setup: unchanged"}, actions(changes)); diff != "" {
		t.Errorf("reinstall (-want +got):\n%s", diff)
	}
	if got := readFile(t, cfg); got != before {
		t.Errorf("reinstall changed %s:\n%s\nwas:\n%s", cfg, got, before)
	}

	// A hand-edited event list is stale; install repairs it.
	gitT(t, root, "config", "--local", "--unset-all", "hook.agents-setup.event")
	gitT(t, root, "config", "--local", "--add", "hook.agents-setup.event", "post-merge")
	reports, err = Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := reports[0].Hooks; got[0].State != Stale {
		t.Errorf("status with post-checkout dropped: %+v", got)
	}
	if _, err := Install(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, root, "config", "--local", "--get-all", "hook.agents-setup.event"); got != "post-checkout\npost-merge\npost-rewrite" {
		t.Errorf("repaired events = %q", got)
	}

	// Someone removed the section: recorded, so removed.
	gitT(t, overlay, "config", "--local", "--remove-section", "hook.agents-setup")
	reports, err = Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := reports[1].State(); got != Removed {
		t.Errorf("status after the section went = %v", got)
	}

	if _, err := Uninstall(ctx, opts); err != nil {
		t.Fatal(err)
	}
	for _, dir := range opts.Repos {
		if out, err := exec.Command("git", "-C", dir, "config", "--local", "--get-regexp", `^hook\.`).CombinedOutput(); err == nil {
			t.Errorf("%s: hook config left after uninstall: %s", dir, out)
		}
	}
	reports, err = Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.State() != Missing {
			t.Errorf("status after uninstall %s = %v", r.Repo, r.State())
		}
	}
}

func TestInstallErrors(t *testing.T) {
	setupEnv(t)
	fakeGit(t, version{2, 39, 5})
	ctx := context.Background()
	notRepo := t.TempDir()
	if _, err := Install(ctx, Options{Repos: []string{notRepo}, Command: testCommand}); err == nil || !strings.Contains(err.Error(), notRepo) {
		t.Errorf("install outside a repository: %v", err)
	}
	if _, err := Install(ctx, Options{Command: testCommand}); err == nil {
		t.Error("install with no repositories: no error")
	}
	if _, err := Install(ctx, Options{Repos: []string{newRepo(t)}}); err == nil {
		t.Error("install with no command: no error")
	}
	state := t.TempDir()
	writeFile(t, filepath.Join(state, recordFile), "{not json", 0o600)
	if _, err := Status(ctx, Options{Repos: []string{newRepo(t)}, Command: testCommand, StateDir: state}); err == nil || !strings.Contains(err.Error(), recordFile) {
		t.Errorf("status with a corrupt record: %v", err)
	}
}

func TestScriptIsValidShell(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, event := range hookEvents {
		b := script(event, CommandLine(testCommand))
		if !isOurs(b) {
			t.Errorf("%s script lacks the marker", event)
		}
		cmd := exec.Command("sh", "-n")
		cmd.Stdin = bytes.NewReader(b)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sh -n on the %s script: %v\n%s", event, err, out)
		}
	}
	if isOurs([]byte("#!/bin/sh\n# not agents-setup managed hook\n")) {
		t.Error("isOurs matched a line that does not start with the marker")
	}
}

// TestInstallSharedHooks lists repositories that share hooks: a main
// repository and its linked worktree, and two repositories under one global
// core.hooksPath. Each hook is planned once: a second plan would move our own
// script aside as the "original".
func TestInstallSharedHooks(t *testing.T) {
	setupEnv(t)
	ctx := context.Background()
	main := newRepo(t)
	gitT(t, main, "commit", "--allow-empty", "-q", "-m", "first")
	wt := filepath.Join(t.TempDir(), "wt")
	gitT(t, main, "worktree", "add", "-q", wt)
	user := "#!/bin/sh\necho user\n"
	writeFile(t, filepath.Join(main, ".git", "hooks", "post-checkout"), user, 0o755)

	// A global core.hooksPath shared by two more repositories.
	shared := t.TempDir()
	writeFile(t, filepath.Join(shared, "post-merge"), user, 0o700)
	f, err := os.OpenFile(os.Getenv("GIT_CONFIG_GLOBAL"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[core]\n\thooksPath = %s\n", shared)
	f.Close()
	a, b := newRepo(t), newRepo(t)
	// main and wt override it back to their own.
	gitT(t, main, "config", "core.hooksPath", filepath.Join(main, ".git", "hooks"))

	for _, v := range []version{{2, 39, 5}, {2, 54, 0}} {
		fakeGit(t, v)
		opts := Options{Repos: []string{main, wt, a, b}, Command: testCommand, Force: true}
		before := map[string]map[string]string{main: snapshot(t, filepath.Join(main, ".git", "hooks")), shared: snapshot(t, shared)}
		beforeConfig := readFile(t, filepath.Join(main, ".git", "config"))
		for range 2 {
			if _, err := Install(ctx, opts); err != nil {
				t.Fatal(err)
			}
		}
		reports, err := Status(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reports {
			if s := r.State(); s != Installed && s != Chained {
				t.Errorf("git %v: status %s = %v %+v", v, r.Repo, s, r.Hooks)
			}
		}
		if v == configHooksSince {
			if got := gitT(t, wt, "config", "--get-all", "hook.agents-setup.event"); got != "post-checkout\npost-merge\npost-rewrite" {
				t.Errorf("events through the worktree = %q", got)
			}
		} else {
			for _, p := range []string{filepath.Join(main, ".git", "hooks", "post-checkout"), filepath.Join(shared, "post-merge")} {
				if got := readFile(t, p+origSuffix); got != user {
					t.Errorf("git %v: %s = %q, want the user's hook", v, p+origSuffix, got)
				}
			}
		}
		if _, err := Uninstall(ctx, opts); err != nil {
			t.Fatal(err)
		}
		for dir, snap := range before {
			d := dir
			if dir == main {
				d = filepath.Join(main, ".git", "hooks")
			}
			if diff := cmp.Diff(snap, snapshot(t, d)); diff != "" {
				t.Errorf("git %v: uninstall left %s (-before +after):\n%s", v, d, diff)
			}
		}
		if got := readFile(t, filepath.Join(main, ".git", "config")); got != beforeConfig {
			t.Errorf("git %v: uninstall left .git/config:\n%s\nwas:\n%s", v, got, beforeConfig)
		}
	}
}

func TestWriteReports(t *testing.T) {
	reports := []Report{
		{Repo: "/src/fuchsia", Method: Script, Hooks: []HookReport{
			{Event: "post-checkout", State: Chained, Detail: "runs /src/fuchsia/.git/hooks/post-checkout.agents-setup-orig first"},
			{Event: "post-merge", State: Installed},
		}},
		{Repo: "/src/fuchsia/vendor/foo", Method: Config, Hooks: []HookReport{
			{Event: "post-checkout", State: Removed, Detail: "hook.agents-setup was removed from the configuration; run agents-setup hooks install"},
		}},
		{Repo: "/elsewhere/x", Method: Script, Hooks: []HookReport{{Event: "post-merge", State: Missing}}},
	}
	var b strings.Builder
	if err := WriteReports(&b, "/src/fuchsia", reports); err != nil {
		t.Fatal(err)
	}
	want := `.: post-checkout: installed, foreign hook chained (script; runs /src/fuchsia/.git/hooks/post-checkout.agents-setup-orig first)
.: post-merge: installed (script)
vendor/foo: post-checkout: removed (config; hook.agents-setup was removed from the configuration; run agents-setup hooks install)
/elsewhere/x: post-merge: missing (script)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteReports (-want +got):\n%s", diff)
	}
	if got := reports[0].State(); got != Chained {
		t.Errorf("State() = %v, want chained", got)
	}
	if got := (Report{Hooks: []HookReport{{State: Stale}, {State: Removed}, {State: Missing}}}).State(); got != Removed {
		t.Errorf("State() = %v, want removed", got)
	}
	if diff := cmp.Diff([]string{"/bin/agents-setup", "--root", "/src", "hooks", "run", "--"}, HookCommand("/bin/agents-setup", "--root", "/src")); diff != "" {
		t.Errorf("HookCommand (-want +got):\n%s", diff)
	}
}
