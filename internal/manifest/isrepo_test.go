package manifest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
)

// TestIsRepoMatchesGoGit checks isRepo, built on go-git's storage packages,
// against go-git's own PlainOpenWithOptions on repositories of every shape
// it decides: a .git directory, a .git file (linked worktree), a bare
// repository, and broken ones.
func TestIsRepoMatchesGoGit(t *testing.T) {
	pinEnv(t)
	hasGit := true
	if _, err := exec.LookPath("git"); err != nil {
		hasGit = false
	}
	tests := []struct {
		name    string
		make    func(t *testing.T, dir string)
		git     bool // needs the real git
		want    bool
		wantErr bool
	}{
		{name: "go-git init", make: func(t *testing.T, dir string) { initRepo(t, dir) }, want: true},
		{name: "no .git, nothing", make: func(t *testing.T, dir string) {}, want: false},
		{name: "empty .git dir", make: func(t *testing.T, dir string) { mkdir(t, filepath.Join(dir, ".git")) }, want: false},
		{name: "bare", make: func(t *testing.T, dir string) {
			if _, err := git.PlainInit(dir, true); err != nil {
				t.Fatal(err)
			}
		}, want: true},
		{name: "HEAD to a missing branch", make: func(t *testing.T, dir string) {
			initRepo(t, dir)
			writeFile(t, filepath.Join(dir, ".git/HEAD"), "ref: refs/heads/nowhere\n")
		}, want: true},
		{name: "no HEAD", make: func(t *testing.T, dir string) {
			initRepo(t, dir)
			if err := os.Remove(filepath.Join(dir, ".git/HEAD")); err != nil {
				t.Fatal(err)
			}
		}, want: false},
		{name: "bad config", make: func(t *testing.T, dir string) {
			initRepo(t, dir)
			writeFile(t, filepath.Join(dir, ".git/config"), "[core\n")
		}, wantErr: true},
		{name: "unknown extension", make: func(t *testing.T, dir string) {
			initRepo(t, dir)
			writeFile(t, filepath.Join(dir, ".git/config"), "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tfrobnicate = true\n")
		}, want: true},
		{name: ".git file to a repository", make: func(t *testing.T, dir string) {
			initRepo(t, filepath.Join(dir, "real"))
			writeFile(t, filepath.Join(dir, ".git"), "gitdir: real/.git\n")
		}, want: true},
		{name: ".git file to nowhere", make: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".git"), "gitdir: /nonexistent/x\n")
		}, want: false},
		{name: ".git file without prefix", make: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".git"), "not a gitdir\n")
		}, wantErr: true},
		{name: "commondir to nowhere", make: func(t *testing.T, dir string) {
			initRepo(t, dir)
			writeFile(t, filepath.Join(dir, ".git/commondir"), "../../gone\n")
		}, wantErr: true},
		{name: "linked worktree", git: true, make: func(t *testing.T, dir string) {
			main := filepath.Join(dir, "main")
			mkdir(t, main)
			run(t, main, "git", "init", "-q")
			run(t, main, "git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x")
			run(t, main, "git", "worktree", "add", "-q", "-b", "side", filepath.Join(dir, "wt"))
			// Look at the linked worktree itself.
			if err := os.Rename(filepath.Join(dir, "wt", ".git"), filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
		}, want: true},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.name] {
			t.Fatalf("duplicate case %q", tc.name)
		}
		seen[tc.name] = true
		if tc.git && !hasGit {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.make(t, dir)
			got, err := isRepo(dir)
			if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
				t.Errorf("isRepo = %v, %v; want %v (error %v)", got, err, tc.want, tc.wantErr)
			}
			// go-git itself agrees: an error where it fails for other
			// reasons than the repository's absence or extensions.
			_, gerr := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
			gotRepo := gerr == nil || errors.Is(gerr, git.ErrUnknownExtension) ||
				errors.Is(gerr, git.ErrUnsupportedExtensionRepositoryFormatVersion) ||
				errors.Is(gerr, git.ErrUnsupportedRepositoryFormatVersion)
			gotErr := gerr != nil && !gotRepo && !errors.Is(gerr, git.ErrRepositoryNotExists)
			if gotErr != (err != nil) || (!gotErr && gotRepo != got) {
				t.Errorf("go-git: %v; isRepo: %v, %v", gerr, got, err)
			}
		})
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
