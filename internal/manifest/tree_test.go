package manifest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
)

// pinEnv keeps tests away from the real home and git configuration.
func pinEnv(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig"))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func initRepo(t *testing.T, dir string) *git.Repository {
	t.Helper()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// jiriTree builds a jiri checkout: a root with .jiri_root/ and its own
// manifests, two vendor repositories with manifests, a vendor dir with a
// config that is not a repository, and a repository without a config.
func jiriTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".jiri_root", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, root)
	perm := func(overlay, cat, content string) {
		writeFile(t, filepath.Join(root, overlay, ".agents/config/permissions", cat+".txt"), content)
	}
	perm(".", "read_only", "# root\ngit status\ngit diff # inline\n")
	perm(".", "never_allow", "git push --force\n")
	writeFile(t, filepath.Join(root, ".agents/config/services.txt"), "# restart\nagent.service\n")

	initRepo(t, filepath.Join(root, "vendor/beta"))
	perm("vendor/beta", "never_allow", "\nrm -rf /\n")
	perm("vendor/beta", "device_ops", "ffx target reboot\n")

	initRepo(t, filepath.Join(root, "vendor/alpha"))
	perm("vendor/alpha", "read_only", "cat\n")
	writeFile(t, filepath.Join(root, "vendor/alpha/.agents/config/services.txt"), "other.service\nagent.service\n")

	// Not a repository: its rules must not count.
	perm("vendor/gamma", "read_only", "bash\n")
	// A repository without a config, and a file.
	initRepo(t, filepath.Join(root, "vendor/delta"))
	writeFile(t, filepath.Join(root, "vendor/README"), "x\n")
	return root
}

func TestLoadJiri(t *testing.T) {
	pinEnv(t)
	root := jiriTree(t)
	sub := filepath.Join(root, "vendor/alpha/src/deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := FindRoot(sub)
	if err != nil {
		t.Fatal(err)
	}
	if got != root {
		t.Fatalf("FindRoot(%s) = %s, want %s", sub, got, root)
	}
	tree, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	const (
		rootPerm  = ".agents/config/permissions/"
		alphaPerm = "vendor/alpha/.agents/config/permissions/"
		betaPerm  = "vendor/beta/.agents/config/permissions/"
	)
	want := &Tree{
		Root:     root,
		Overlays: []string{".", "vendor/alpha", "vendor/beta"},
		Lines: []Line{
			{Text: "git status", Category: "read_only", Overlay: ".", File: rootPerm + "read_only.txt", Num: 2},
			{Text: "git diff", Category: "read_only", Overlay: ".", File: rootPerm + "read_only.txt", Num: 3},
			{Text: "cat", Category: "read_only", Overlay: "vendor/alpha", File: alphaPerm + "read_only.txt", Num: 1},
			{Text: "ffx target reboot", Category: "device_ops", Overlay: "vendor/beta", File: betaPerm + "device_ops.txt", Num: 1},
			{Text: "git push --force", Category: "never_allow", Overlay: ".", File: rootPerm + "never_allow.txt", Num: 1},
			{Text: "rm -rf /", Category: "never_allow", Overlay: "vendor/beta", File: betaPerm + "never_allow.txt", Num: 2},
		},
		Files: []string{
			rootPerm + "read_only.txt", rootPerm + "never_allow.txt", ".agents/config/services.txt",
			alphaPerm + "read_only.txt", "vendor/alpha/.agents/config/services.txt",
			betaPerm + "device_ops.txt", betaPerm + "never_allow.txt",
		},
		Services: []string{"agent.service", "other.service"},
		Skipped:  []string{"vendor/gamma"},
	}
	if diff := cmp.Diff(want, tree); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
}

func TestLoadBuiltin(t *testing.T) {
	pinEnv(t)
	root := t.TempDir()
	initRepo(t, root)
	// services.txt alone is no manifest.
	writeFile(t, filepath.Join(root, ".agents/config/services.txt"), "a.service\n")
	tree, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if !tree.Builtin || len(tree.Lines) < 50 {
		t.Fatalf("Load: Builtin=%v with %d lines, want the defaults", tree.Builtin, len(tree.Lines))
	}
	if diff := cmp.Diff([]string{"a.service"}, tree.Services); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
	last := -1
	for _, l := range tree.Lines {
		if l.Overlay != "builtin" || l.File != BuiltinFile+l.Category+".txt" || l.Num < 1 {
			t.Errorf("builtin line %+v", l)
		}
		i := indexOf(Categories, l.Category)
		if i < last {
			t.Errorf("line %+v out of category order", l)
		}
		last = i
	}
	def, err := Load("")
	if err != nil || !def.Builtin || !cmp.Equal(def.Lines, tree.Lines) {
		t.Errorf(`Load("") = %v, %v; want the defaults`, def, err)
	}
	// One manifest, even empty, replaces the defaults.
	writeFile(t, filepath.Join(root, ".agents/config/permissions/never_allow.txt"), "# nothing yet\n")
	tree, err = Load(root)
	if err != nil || tree.Builtin || len(tree.Lines) != 0 {
		t.Errorf("Load with an empty manifest = %+v, %v", tree, err)
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func TestLoadErrors(t *testing.T) {
	pinEnv(t)
	tests := []struct {
		file, content, want string
	}{
		{"vendor/beta/.agents/config/permissions/never_allow.txt", "git status\n\ngrep 'x\n",
			"vendor/beta/.agents/config/permissions/never_allow.txt:3:6: reached EOF without closing quote"},
		{".agents/config/permissions/readonly.txt", "git status\n",
			".agents/config/permissions/readonly.txt: not a category"},
		{".agents/config/services.txt", "ok.service\nrm -rf /\n",
			`.agents/config/services.txt:2: "rm -rf /" is not a service name`},
		{"vendor/alpha/.agents/config/permissions/read_only.txt", "cat\xff\n",
			"vendor/alpha/.agents/config/permissions/read_only.txt:1: invalid UTF-8"},
	}
	for _, tc := range tests {
		root := jiriTree(t)
		writeFile(t, filepath.Join(root, tc.file), tc.content)
		tree, err := Load(root)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Load with %s = %q: error %v, want prefix %q", tc.file, tc.content, err, tc.want)
		}
		if tree != nil {
			t.Errorf("Load returned a tree with an error")
		}
	}
}

func TestFindRootGit(t *testing.T) {
	pinEnv(t)
	top := t.TempDir()
	initRepo(t, top)
	sub := filepath.Join(top, "a/b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{top, sub} {
		got, err := FindRoot(dir)
		if err != nil || got != top {
			t.Errorf("FindRoot(%s) = %q, %v; want %s", dir, got, err, top)
		}
	}

	// A nested repository is its own root; a jiri root above wins.
	nested := filepath.Join(top, "nested")
	initRepo(t, nested)
	if got, err := FindRoot(nested); err != nil || got != nested {
		t.Errorf("FindRoot(nested) = %q, %v", got, err)
	}
	if err := os.Mkdir(filepath.Join(top, ".jiri_root"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := FindRoot(nested); err != nil || got != top {
		t.Errorf("FindRoot(nested under jiri) = %q, %v; want %s", got, err, top)
	}

	// No checkout at all, and a .git that is no repository.
	none := t.TempDir()
	if got, err := FindRoot(none); err == nil || !strings.Contains(err.Error(), "not inside a jiri checkout") {
		t.Errorf("FindRoot(%s) = %q, %v; want an error", none, got, err)
	}
	writeFile(t, filepath.Join(none, ".git"), "not a gitdir\n")
	if got, err := FindRoot(none); err == nil {
		t.Errorf("FindRoot with a bogus .git = %q, want an error", got)
	}
}

// TestFindRootWorktree uses real git for a linked worktree: go-git cannot
// create one.
func TestFindRootWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	pinEnv(t)
	base := t.TempDir()
	main := filepath.Join(base, "main")
	r := initRepo(t, main)
	writeFile(t, filepath.Join(main, ".agents/config/permissions/read_only.txt"), "git status\n")
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add(".agents"); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0)}
	if _, err := wt.Commit("manifests", &git.CommitOptions{Author: sig}); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(base, "linked")
	cmd := exec.Command("git", "-C", main, "worktree", "add", "-q", "-b", "side", linked)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	sub := filepath.Join(linked, ".agents/config")
	got, err := FindRoot(sub)
	if err != nil || got != linked {
		t.Fatalf("FindRoot(%s) = %q, %v; want %s", sub, got, err, linked)
	}
	tree, err := Load(got)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Builtin || len(tree.Lines) != 1 || tree.Lines[0].Text != "git status" {
		t.Errorf("Load(linked worktree) = %+v", tree)
	}

	// A vendor overlay that is itself a linked worktree counts as a repository.
	root := jiriTree(t)
	vend := filepath.Join(root, "vendor/linked")
	cmd = exec.Command("git", "-C", main, "worktree", "add", "-q", "-b", "vend", vend)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	tree, err = Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tree.Overlays, "vendor/linked") {
		t.Errorf("Load: overlays %v, want vendor/linked", tree.Overlays)
	}
}

func TestFingerprint(t *testing.T) {
	pinEnv(t)
	root := jiriTree(t)
	fp := func() string {
		t.Helper()
		s, err := Fingerprint(root)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := fp()
	if again := fp(); again != first {
		t.Fatalf("Fingerprint not stable: %s then %s", first, again)
	}
	// Files Load does not read leave it alone.
	writeFile(t, filepath.Join(root, "vendor/alpha/main.go"), "package main\n")
	writeFile(t, filepath.Join(root, ".agents/config/README.md"), "docs\n")
	if got := fp(); got != first {
		t.Errorf("Fingerprint changed for an unrelated file")
	}
	changes := []struct {
		name string
		do   func()
	}{
		{"edit a manifest", func() {
			writeFile(t, filepath.Join(root, "vendor/beta/.agents/config/permissions/never_allow.txt"), "rm -rf ~\n")
		}},
		{"add a manifest", func() {
			writeFile(t, filepath.Join(root, "vendor/alpha/.agents/config/permissions/local_changes.txt"), "make\n")
		}},
		{"edit services", func() {
			writeFile(t, filepath.Join(root, ".agents/config/services.txt"), "x.service\n")
		}},
		{"a vendor dir becomes a repository", func() { initRepo(t, filepath.Join(root, "vendor/gamma")) }},
		{"a new overlay", func() {
			writeFile(t, filepath.Join(root, "vendor/delta/.agents/config/permissions/read_only.txt"), "ls\n")
		}},
		{"a typo'd category file", func() {
			writeFile(t, filepath.Join(root, ".agents/config/permissions/neverallow.txt"), "ls\n")
		}},
	}
	prev := fp()
	for _, c := range changes {
		c.do()
		got := fp()
		if got == prev {
			t.Errorf("Fingerprint unchanged after: %s", c.name)
		}
		prev = got
	}
	def, err := Fingerprint("")
	if err != nil || def == "" || def == prev {
		t.Errorf(`Fingerprint("") = %q, %v`, def, err)
	}
}

func TestWriteDefaults(t *testing.T) {
	pinEnv(t)
	root := t.TempDir()
	mine := filepath.Join(root, ".agents/config/permissions/never_allow.txt")
	writeFile(t, mine, "rm -rf /tmp/mine\n")
	written, skipped, err := WriteDefaults(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != len(Categories)-1 {
		t.Errorf("written %v", written)
	}
	if diff := cmp.Diff([]string{".agents/config/permissions/never_allow.txt"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if data, _ := os.ReadFile(mine); string(data) != "rm -rf /tmp/mine\n" {
		t.Errorf("WriteDefaults replaced an existing file: %q", data)
	}
	written, skipped, err = WriteDefaults(root)
	if err != nil || len(written) != 0 || len(skipped) != len(Categories) {
		t.Errorf("second WriteDefaults = %v, %v, %v", written, skipped, err)
	}
	tree, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	builtin, _ := Load("")
	var want []string
	for _, l := range builtin.Lines {
		if l.Category != "never_allow" {
			want = append(want, l.Category+": "+l.Text)
		}
	}
	want = append(want, "never_allow: rm -rf /tmp/mine")
	var got []string
	for _, l := range tree.Lines {
		got = append(got, l.Category+": "+l.Text)
	}
	if tree.Builtin {
		t.Errorf("Load after WriteDefaults still uses the built-in manifests")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("written manifests (-want +got):\n%s", diff)
	}
}

func initRepoB(dir string) (*git.Repository, error) { return git.PlainInit(dir, false) }
