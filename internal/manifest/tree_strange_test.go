package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/statefile"
)

// TestBrokenVendorHEAD: a vendor repository whose HEAD is empty, a FIFO, a
// link to /dev/zero or a directory is an error naming the overlay, never
// a silent skip that drops its deny rules; a FIFO anywhere go-git reads
// is an error, never a hang.
func TestBrokenVendorHEAD(t *testing.T) {
	pinEnv(t)
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, git string)
	}{
		{"empty HEAD", func(t *testing.T, git string) { writeFile(t, filepath.Join(git, "HEAD"), "") }},
		{"blank HEAD", func(t *testing.T, git string) { writeFile(t, filepath.Join(git, "HEAD"), " \n") }},
		{"HEAD a FIFO", func(t *testing.T, git string) { mkfifo(t, filepath.Join(git, "HEAD")) }},
		{"HEAD to /dev/zero", func(t *testing.T, git string) { relink(t, "/dev/zero", filepath.Join(git, "HEAD")) }},
		{"HEAD a directory", func(t *testing.T, git string) {
			os.Remove(filepath.Join(git, "HEAD"))
			mkdir(t, filepath.Join(git, "HEAD"))
		}},
		{"config a FIFO", func(t *testing.T, git string) { mkfifo(t, filepath.Join(git, "config")) }},
		{"branch a FIFO", func(t *testing.T, git string) { mkfifo(t, filepath.Join(git, "refs/heads/main")) }},
		{"packed-refs a FIFO", func(t *testing.T, git string) { mkfifo(t, filepath.Join(git, "packed-refs")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := jiriTree(t)
			git := filepath.Join(root, "vendor/beta/.git")
			writeFile(t, filepath.Join(git, "HEAD"), "ref: refs/heads/main\n")
			tc.break_(t, git)
			done := make(chan error, 1)
			go func() { _, err := Load(root); done <- err }()
			select {
			case err := <-done:
				t.Logf("error: %v", err)
				if err == nil || !strings.Contains(err.Error(), "vendor/beta") {
					t.Errorf("got %v, want an error naming vendor/beta", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Load hung")
			}
		})
	}
}

// TestStrangeManifests: a FIFO or a link to /dev/zero at a manifest, at
// programs.txt or services.txt, or at the permissions directory is an
// error naming it, never a hang; so is a manifest past its bound.
func TestStrangeManifests(t *testing.T) {
	pinEnv(t)
	for _, name := range []string{"permissions/read_only.txt", "programs.txt", "services.txt", "permissions"} {
		for _, kind := range []string{"fifo", "dev-zero"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				root := jiriTree(t)
				path := filepath.Join(root, ConfigDir, filepath.FromSlash(name))
				os.RemoveAll(path)
				if kind == "fifo" {
					mkfifo(t, path)
				} else {
					relink(t, "/dev/zero", path)
				}
				for _, f := range []func() error{
					func() error { _, err := Load(root); return err },
					func() error { _, err := Fingerprint(root); return err },
				} {
					done := make(chan error, 1)
					go func() { done <- f() }()
					select {
					case err := <-done:
						if err == nil || !strings.Contains(err.Error(), name) {
							t.Errorf("got %v, want an error naming %s", err, name)
						}
					case <-time.After(5 * time.Second):
						t.Fatal("hung")
					}
				}
			})
		}
	}
	root := jiriTree(t)
	writeFile(t, filepath.Join(root, ConfigDir, "permissions/read_only.txt"), strings.Repeat("ls\n", statefile.MaxManifest/3+1))
	if _, err := Load(root); !errors.Is(err, statefile.ErrTooLarge) {
		t.Errorf("a manifest past its bound: %v", err)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

func relink(t *testing.T, target, path string) {
	t.Helper()
	os.Remove(path)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}
