package supervisor

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A line's changes to the protected paths of a checkout are undone and
// named: a planted hook, a rewritten .git/config, a changed manifest, a
// deleted settings file, a mode made executable; .git replaced by a link
// is named and nothing is written through it. Other files stay as the
// line left them, and a kept change stays.
func TestSnapshotRestore(t *testing.T) {
	type op struct{ file, content string }
	tests := []struct {
		name    string
		change  func(top string) error
		keep    string
		want    []string // changed, relative to top
		wantErr bool
	}{
		{name: "nothing", change: func(string) error { return nil }},
		{name: "planted hook", change: func(top string) error {
			return os.WriteFile(filepath.Join(top, ".git/hooks/post-checkout"), []byte("#!/bin/sh\ntouch pwned\n"), 0o755)
		}, want: []string{".git/hooks/post-checkout"}},
		{name: "config", change: func(top string) error {
			return os.WriteFile(filepath.Join(top, ".git/config"), []byte("[core]\n\tfsmonitor = touch pwned\n"), 0o644)
		}, want: []string{".git/config"}},
		{name: "config kept", keep: ".git/config", change: func(top string) error {
			return os.WriteFile(filepath.Join(top, ".git/config"), []byte("[user]\n\tname = x\n"), 0o644)
		}},
		{name: "manifest and settings", change: func(top string) error {
			if err := os.WriteFile(filepath.Join(top, ".agents/config/new.txt"), []byte("allow curl\n"), 0o644); err != nil {
				return err
			}
			return os.Remove(filepath.Join(top, ".claude/settings.json"))
		}, want: []string{".agents/config/new.txt", ".claude/settings.json"}},
		{name: "mode", change: func(top string) error {
			return os.Chmod(filepath.Join(top, ".git/hooks/pre-commit.sample"), 0o755)
		}, want: []string{".git/hooks/pre-commit.sample"}},
		{name: "hooks dir replaced", change: func(top string) error {
			if err := os.RemoveAll(filepath.Join(top, ".git/hooks")); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(top, "elsewhere"), filepath.Join(top, ".git/hooks"))
		}, want: []string{".git/hooks", ".git/hooks/pre-commit.sample"}},
		{name: "git dir replaced", change: func(top string) error {
			if err := os.Rename(filepath.Join(top, ".git"), filepath.Join(top, "git-moved")); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(top, "elsewhere"), filepath.Join(top, ".git"))
		}, want: []string{".git"}},
		{name: "git dir replaced by a directory", change: func(top string) error {
			if err := os.Rename(filepath.Join(top, ".git"), filepath.Join(top, "git-moved")); err != nil {
				return err
			}
			return os.MkdirAll(filepath.Join(top, ".git/hooks"), 0o755)
		}, want: []string{".git"}, wantErr: true}, // the new one put aside
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			for _, f := range []op{
				{file: ".git/config", content: "[core]\n"},
				{file: ".git/hooks/pre-commit.sample", content: "#!/bin/sh\n"},
				{file: ".agents/config/grants.txt", content: "allow git status\n"},
				{file: ".claude/settings.json", content: "{}\n"},
				{file: "elsewhere/keep", content: "person's\n"},
				{file: "src.go", content: "package x\n"},
			} {
				p := filepath.Join(top, f.file)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := TakeSnapshot([]string{top, top})
			if err != nil {
				t.Fatal(err)
			}
			before := map[string]string{}
			for _, f := range []string{".git/config", ".git/hooks/pre-commit.sample", ".agents/config/grants.txt", ".claude/settings.json"} {
				data, _ := os.ReadFile(filepath.Join(top, f))
				before[f] = string(data)
			}
			if err := tc.change(top); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(top, "src.go"), []byte("package y\n"), 0o644)
			got, err := s.Restore(func(p string) bool { return tc.keep != "" && p == filepath.Join(top, tc.keep) })
			if (err != nil) != tc.wantErr {
				t.Errorf("err %v, want error %v", err, tc.wantErr)
			}
			var rel []string
			for _, p := range got {
				r, _ := filepath.Rel(top, p)
				rel = append(rel, r)
			}
			if !slices.Equal(rel, tc.want) {
				t.Errorf("changed %q, want %q", rel, tc.want)
			}
			if data, _ := os.ReadFile(filepath.Join(top, "elsewhere/keep")); string(data) != "person's\n" {
				t.Errorf("a file through the link changed: %q", data)
			}
			if entries, _ := os.ReadDir(filepath.Join(top, "elsewhere")); len(entries) != 1 {
				t.Errorf("files written through the link: %v", entries)
			}
			if data, _ := os.ReadFile(filepath.Join(top, "src.go")); string(data) != "package y\n" {
				t.Error("an unprotected file was undone")
			}
			if _, err := os.Lstat(filepath.Join(top, "git-moved")); err == nil {
				t.Error("the git directory was not moved back")
			}
			if tc.keep != "" {
				return
			}
			for f, c := range before {
				if data, _ := os.ReadFile(filepath.Join(top, f)); string(data) != c {
					t.Errorf("%s = %q, want %q", f, data, c)
				}
			}
			if fi, _ := os.Stat(filepath.Join(top, ".git/hooks/pre-commit.sample")); fi == nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("hook mode not restored: %v", fi)
			}
			if _, err := os.Stat(filepath.Join(top, ".git/hooks/post-checkout")); err == nil {
				t.Error("the planted hook stayed")
			}
		})
	}
}

// TestSnapshotWorktree: in a linked worktree .git is a file naming the git
// directory; the snapshot takes it (no error for the paths below a file)
// and undoes a change to the worktree's git directory and to the common
// one it shares.
func TestSnapshotWorktree(t *testing.T) {
	root := t.TempDir()
	top, common := filepath.Join(root, "wt"), filepath.Join(root, "main", ".git")
	gd := filepath.Join(common, "worktrees", "wt")
	for p, content := range map[string]string{
		filepath.Join(top, ".git"):               "gitdir: " + gd + "\n",
		filepath.Join(gd, "commondir"):           "../..\n",
		filepath.Join(gd, "config.worktree"):     "[core]\n",
		filepath.Join(common, "config"):          "[core]\n",
		filepath.Join(common, "hooks", "x.smpl"): "#!/bin/sh\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := TakeSnapshot([]string{top})
	if err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(common, "hooks", "post-checkout")
	for p, content := range map[string]string{
		planted:                              "#!/bin/sh\ntouch pwned\n",
		filepath.Join(gd, "config.worktree"): "[core]\n\tfsmonitor = touch pwned\n",
	} {
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	changed, err := s.Restore(func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(common, "hooks", "post-checkout"), filepath.Join(gd, "config.worktree")}; !slices.Equal(changed, sortedCopy(want)) {
		t.Errorf("changed %q, want %q", changed, want)
	}
	if _, err := os.Stat(planted); err == nil {
		t.Error("the planted hook is still there")
	}
	if data, _ := os.ReadFile(filepath.Join(gd, "config.worktree")); string(data) != "[core]\n" {
		t.Errorf("config.worktree: %q", data)
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestSnapshotSettled: a file last changed well before the snapshot is not
// read again when its status is unchanged, so the changes that keep its
// size (and put its mtime back, or swap in another inode of the same
// size and times) must still show in its status and be undone.
func TestSnapshotSettled(t *testing.T) {
	old, oldClock := settled, clockSettable
	settled = 0 // every file below was last changed before its snapshot
	clockSettable = func() bool { return false }
	t.Cleanup(func() { settled, clockSettable = old, oldClock })
	const orig = "[core]\n\tbare = false\n"
	tests := []struct {
		name   string
		change func(p string) error
		want   bool // reported as changed
	}{
		{name: "untouched", change: func(string) error { return nil }},
		{name: "same size", change: func(p string) error {
			return os.WriteFile(p, []byte("[core]\n\tpager = pwnd\n"), 0o644)
		}, want: true},
		{name: "same size, mtime put back", change: func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte("[core]\n\tpager = pwnd\n"), 0o644); err != nil {
				return err
			}
			return os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, want: true},
		{name: "renamed over, times copied", change: func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			tmp := p + ".new"
			if err := os.WriteFile(tmp, []byte("[core]\n\tpager = pwnd\n"), 0o644); err != nil {
				return err
			}
			if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
				return err
			}
			return os.Rename(tmp, p)
		}, want: true},
		{name: "touched only", change: func(p string) error {
			now := time.Now()
			return os.Chtimes(p, now, now)
		}}, // read again, and the same
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			p := filepath.Join(top, ".git", "config")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(orig), 0o644); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // several ticks of the kernel's ctime clock
			s, err := TakeSnapshot([]string{top})
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.change(p); err != nil {
				t.Fatal(err)
			}
			got, err := s.Restore(nil)
			if err != nil {
				t.Fatal(err)
			}
			if changed := slices.Contains(got, p); changed != tc.want {
				t.Errorf("changed %q, want %s reported: %v", got, p, tc.want)
			}
			if data, _ := os.ReadFile(p); string(data) != orig {
				t.Errorf("content %q, want %q", data, orig)
			}
		})
	}
}

// TestSnapshotMissingDir: protected paths below a directory missing at
// the snapshot are not looked at then, and are undone when a line creates
// them.
func TestSnapshotMissingDir(t *testing.T) {
	top := t.TempDir()
	if err := os.MkdirAll(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := TakeSnapshot([]string{top})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range []string{".claude/settings.json", ".git/info/attributes", ".gemini/settings.json"} {
		p := filepath.Join(top, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("planted\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	got, err := s.Restore(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, sortedCopy(want)) {
		t.Errorf("changed %q, want %q", got, sortedCopy(want))
	}
	for _, p := range want {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s stayed", p)
		}
	}
}
