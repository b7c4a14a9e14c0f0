package hooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVerify: the hook scripts Install wrote are recorded (digest and
// identity); a script rewritten since, even one whose bytes are put back
// afterwards, fails Verify naming it; a deleted one does not (it runs
// nothing); installing again records the repaired script.
func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tamper  func(t *testing.T, path string)
		changed bool
	}{
		{"untouched", func(*testing.T, string) {}, false},
		{"rewritten", func(t *testing.T, path string) {
			data := readFile(t, path)
			writeFile(t, path, strings.Replace(data, "hooks run --", "-p full-access --", 1), 0o755)
		}, true},
		{"appended", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("agents-setup -a curl\n")
			f.Close()
		}, true},
		{"rewritten and put back", func(t *testing.T, path string) {
			data := readFile(t, path)
			time.Sleep(10 * time.Millisecond) // a later change time
			writeFile(t, path, data+"# x\n", 0o755)
			writeFile(t, path, data, 0o755)
		}, true},
		{"replaced by a link", func(t *testing.T, path string) {
			os.Rename(path, path+".x")
			os.Symlink(path+".x", path)
		}, true},
		{"deleted", func(t *testing.T, path string) { os.Remove(path) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setupEnv(t)
			fakeGit(t, version{2, 39, 0})
			repo, state := newRepo(t), t.TempDir()
			opts := Options{Repos: []string{repo}, Command: []string{"/usr/local/bin/agents-setup", "hooks", "run", "--"}, StateDir: state}
			if _, err := Install(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if err := Verify(state); err != nil {
				t.Fatalf("after install: %v", err)
			}
			path := filepath.Join(repo, ".git", "hooks", "post-merge")
			tc.tamper(t, path)
			err := Verify(state)
			if tc.changed != errors.Is(err, errChanged) || (tc.changed && !strings.Contains(err.Error(), path)) {
				t.Fatalf("Verify: %v, want changed %v naming %s", err, tc.changed, path)
			}
			if !tc.changed && err != nil {
				t.Fatal(err)
			}
			if tc.name == "replaced by a link" {
				os.Remove(path)
			}
			if _, err := Install(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if err := Verify(state); err != nil {
				t.Errorf("after installing again: %v", err)
			}
		})
	}
}
