//go:build linux

package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// files writes files (path: content; a content ending in "/" makes a
// directory) below root.
func files(t *testing.T, root string, fs map[string]string) {
	t.Helper()
	for f, c := range fs {
		p := filepath.Join(root, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The undo covers every git control path of every repository of the
// checkout and every overlay's manifests: each plant below is made after
// the snapshot and must be gone (or the file as it was) after Restore,
// and named.
func TestSnapshotEveryRepository(t *testing.T) {
	layout := map[string]string{
		".git/config":                          "[core]\n\thooksPath = .husky\n[include]\n\tpath = ../shared.gitconfig\n",
		".git/hooks/pre-commit.sample":         "#!/bin/sh\n",
		".git/modules/lib/HEAD":                "ref: refs/heads/main\n",
		".git/modules/lib/config":              "[core]\n",
		".git/modules/lib/hooks/":              "",
		".git/modules/nested/deep/HEAD":        "ref: refs/heads/main\n",
		".git/modules/nested/deep/config":      "[core]\n",
		".git/worktrees/wt/commondir":          "../..\n",
		".git/worktrees/wt/HEAD":               "ref: refs/heads/wt\n",
		".husky/pre-commit":                    "npm test\n",
		"shared.gitconfig":                     "[user]\n",
		"lib/.git":                             "gitdir: ../.git/modules/lib\n",
		"third_party/proj/.git/config":         "[core]\n",
		"third_party/proj/.git/HEAD":           "ref: refs/heads/main\n",
		"third_party/proj/.git/hooks/":         "",
		"vendor/x/.agents/config/grants.txt":   "allow ls\n",
		"vendor/x/.git/HEAD":                   "ref: refs/heads/main\n",
		"vendor/plain/src.go":                  "package plain\n",
		"src/main.go":                          "package main\n",
		".claude/settings.json":                "{}\n",
		"third_party/proj/.agents/config/a.md": "x\n",
	}
	plants := []struct {
		name  string
		plant map[string]string // written after the snapshot
		want  []string          // reported, relative to the top
	}{
		{"commondir", map[string]string{".git/commondir": "/tmp/elsewhere\n"}, []string{".git/commondir"}},
		{"config.worktree", map[string]string{".git/config.worktree": "[core]\n\tfsmonitor = touch pwned\n"}, []string{".git/config.worktree"}},
		{"submodule hook", map[string]string{".git/modules/lib/hooks/post-checkout": "touch pwned\n"}, []string{".git/modules/lib/hooks/post-checkout"}},
		{"submodule config", map[string]string{".git/modules/nested/deep/config": "[core]\n\tpager = touch pwned\n"}, []string{".git/modules/nested/deep/config"}},
		{"worktree commondir", map[string]string{".git/worktrees/wt/commondir": "/tmp/elsewhere\n"}, []string{".git/worktrees/wt/commondir"}},
		{"gitdir file", map[string]string{"lib/.git": "gitdir: /tmp/elsewhere\n"}, []string{"lib/.git"}},
		{"nested repository", map[string]string{"third_party/proj/.git/hooks/post-merge": "touch pwned\n", "third_party/proj/.git/config": "[core]\n\tfsmonitor = x\n"},
			[]string{"third_party/proj/.git/config", "third_party/proj/.git/hooks/post-merge"}},
		{"hooksPath", map[string]string{".husky/post-checkout": "touch pwned\n", ".husky/pre-commit": "touch pwned\n"}, []string{".husky/post-checkout", ".husky/pre-commit"}},
		{"included config", map[string]string{"shared.gitconfig": "[core]\n\tfsmonitor = touch pwned\n"}, []string{"shared.gitconfig"}},
		{"overlay manifest", map[string]string{"vendor/x/.agents/config/grants.txt": "allow curl\n"}, []string{"vendor/x/.agents/config/grants.txt"}},
		{"new overlay", map[string]string{"vendor/plain/.agents/config/grants.txt": "allow curl\n"}, []string{"vendor/plain/.agents"}},
		{"nested overlay", map[string]string{"third_party/proj/.agents/config/b.md": "y\n"}, []string{"third_party/proj/.agents/config/b.md"}},
	}
	for _, tc := range plants {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			files(t, top, layout)
			before := map[string]string{}
			for f := range tc.plant {
				if data, err := os.ReadFile(filepath.Join(top, f)); err == nil {
					before[f] = string(data)
				}
			}
			s, err := TakeSnapshot([]string{top})
			if err != nil {
				t.Fatal(err)
			}
			files(t, top, tc.plant)
			os.WriteFile(filepath.Join(top, "src/main.go"), []byte("package changed\n"), 0o644)
			got, err := s.Restore(nil)
			if err != nil {
				t.Fatal(err)
			}
			var rel []string
			for _, p := range got {
				r, _ := filepath.Rel(top, p)
				rel = append(rel, r)
			}
			if !slices.Equal(rel, tc.want) {
				t.Errorf("changed %q, want %q", rel, tc.want)
			}
			for f := range tc.plant {
				data, err := os.ReadFile(filepath.Join(top, f))
				if was, ok := before[f]; ok && string(data) != was || !ok && err == nil {
					t.Errorf("%s: %q stayed", f, data)
				}
			}
			if data, _ := os.ReadFile(filepath.Join(top, "src/main.go")); string(data) != "package changed\n" {
				t.Error("an unprotected file was undone")
			}
		})
	}
}

// A plant the undo cannot remove is put aside, never left live: a hook
// made immutable (as root), a hooks directory made unreadable.
func TestSnapshotNeutralises(t *testing.T) {
	top := t.TempDir()
	files(t, top, map[string]string{".git/config": "[core]\n", ".git/hooks/pre-commit.sample": "#!/bin/sh\n"})
	s, err := TakeSnapshot([]string{top})
	if err != nil {
		t.Fatal(err)
	}
	files(t, top, map[string]string{".git/hooks/deep/x": "touch pwned\n", ".git/hooks/post-checkout": "touch pwned\n"})
	if err := os.Chmod(filepath.Join(top, ".git/hooks/deep"), 0); err != nil {
		t.Fatal(err)
	}
	immutable := false
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", filepath.Join(top, ".git/hooks/post-checkout")).CombinedOutput(); err == nil {
			immutable = true
			t.Cleanup(func() {
				filepath.Walk(top, func(p string, _ os.FileInfo, _ error) error {
					exec.Command("chattr", "-i", p).Run()
					return nil
				})
			})
		} else {
			t.Logf("chattr: %v %s (the file system has no immutable flag)", err, out)
		}
	}
	_, err = s.Restore(nil)
	u, _ := err.(*UndoError)
	if immutable && (u == nil || len(u.Aside) != 1 || len(u.Live) != 0) {
		t.Fatalf("immutable plant: %v, want the hooks put aside", err)
	}
	if !immutable && err != nil {
		t.Fatalf("unreadable plant: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(top, ".git/hooks"))
	if len(ents) != 1 || ents[0].Name() != "pre-commit.sample" {
		t.Errorf("hooks now %v, want the snapshot's", ents)
	}
	if immutable && !strings.Contains(u.Aside[0], ".git/hooks.agent-shim-aside-") {
		t.Errorf("put aside at %q", u.Aside[0])
	}
}

// A .git swapped for a link while the undo runs (between two of its
// paths) makes it write nothing outside the checkout: it writes through
// the descriptors it opened at the snapshot, on a thread confined to the
// checkout.
func TestSnapshotLinkSwappedDuringRestore(t *testing.T) {
	root := t.TempDir()
	top, outside := filepath.Join(root, "co"), filepath.Join(root, "outside")
	files(t, top, map[string]string{".git/config": "[core]\n", ".git/hooks/pre-commit.sample": "#!/bin/sh\n", ".claude/settings.json": "{}\n"})
	files(t, outside, map[string]string{"hooks/": "", "keep": "person's\n"})
	s, err := TakeSnapshot([]string{top})
	if err != nil {
		t.Fatal(err)
	}
	files(t, top, map[string]string{".git/config": "[core]\n\tfsmonitor = touch pwned\n", ".git/hooks/post-checkout": "touch pwned\n",
		".claude/settings.json": `{"hooks": "pwned"}` + "\n"})
	swapped := false
	restoreStep = func(string) {
		if swapped {
			return
		}
		swapped = true
		// From another thread: the undo's own may not write there.
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := os.Rename(filepath.Join(top, ".git"), filepath.Join(root, "git-away")); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(outside, filepath.Join(top, ".git")); err != nil {
				t.Error(err)
			}
		}()
		<-done
	}
	t.Cleanup(func() { restoreStep = nil })
	_, err = s.Restore(nil)
	if !swapped {
		t.Fatal("the swap did not happen")
	}
	// The link is gone; the git directory, moved outside the checkout
	// where the undo may not write, is named.
	if fi, err := os.Lstat(filepath.Join(top, ".git")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		t.Error("the link stayed in place of .git")
	}
	if u, ok := err.(*UndoError); !ok || len(u.Moved) != 1 || !strings.Contains(u.Moved[0], "git-away") {
		t.Errorf("Restore: %v, want the git directory named where it went", err)
	}
	ents, _ := os.ReadDir(outside)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"hooks", "keep"}) {
		t.Errorf("written outside the checkout: %q", names)
	}
	if ents, _ := os.ReadDir(filepath.Join(outside, "hooks")); len(ents) != 0 {
		t.Errorf("written outside the checkout: hooks %v", ents)
	}
	// Within the checkout, the undo went on.
	if data, _ := os.ReadFile(filepath.Join(top, ".claude/settings.json")); string(data) != "{}\n" {
		t.Errorf("settings: %q", data)
	}
}
