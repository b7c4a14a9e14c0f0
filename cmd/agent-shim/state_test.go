package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/sessions"
)

// TestPersistGrantThroughSymlink checks the writer of "always" answers
// (and of recommend --apply, which shares updateConfig): a config.json
// kept as a symbolic link into a dotfiles repository stays a link, its
// target gets the grant, and every other key is kept.
func TestPersistGrantThroughSymlink(t *testing.T) {
	for _, tc := range []struct {
		name string
		link func(t *testing.T, dir, target string) string // returns the config path
	}{
		{"relative", func(t *testing.T, dir, target string) string {
			p := filepath.Join(dir, "config.json")
			rel, _ := filepath.Rel(dir, target)
			if err := os.Symlink(rel, p); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"chain", func(t *testing.T, dir, target string) string {
			mid := filepath.Join(dir, "mid.json")
			if err := os.Symlink(target, mid); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "config.json")
			if err := os.Symlink(mid, p); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			dots := filepath.Join(dir, "dotfiles")
			if err := os.MkdirAll(dots, 0o700); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(dots, "config.json")
			if err := os.WriteFile(target, []byte(`{"ui": {"theme": "dark"}, "agentShim": {"mode": "ask"}}`+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := tc.link(t, dir, target)
			if err := sessions.PersistGrant(context.Background(), cfg, "Bash", "npm run *"); err != nil {
				t.Fatal(err)
			}
			if err := sessions.PersistGrant(context.Background(), cfg, "", "/srv/data/..."); err != nil {
				t.Fatal(err)
			}
			if err := sessions.UpdateConfig(context.Background(), cfg, func(f *config.File) bool {
				f.Grants.Allow = append(f.Grants.Allow, "command(npm run)")
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(cfg); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("config.json is no longer a link: %v, %v", fi.Mode(), err)
			}
			f, err := config.Load(target)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(f.Shim.Tools.Allow, "Bash:npm run *") || !slices.Contains(f.Shim.PathScope.Allow, "/srv/data/...") || !slices.Contains(f.Grants.Allow, "command(npm run)") {
				t.Errorf("target lacks the grants: %+v %+v", f.Shim, f.Grants)
			}
			data, _ := os.ReadFile(target)
			if !strings.Contains(string(data), `"theme": "dark"`) {
				t.Errorf("the user's key was lost:\n%s", data)
			}
			tmp, _ := filepath.Glob(filepath.Join(dots, ".*.tmp-*"))
			tmp2, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
			if len(tmp)+len(tmp2) > 0 {
				t.Errorf("temporary files left: %v %v", tmp, tmp2)
			}
		})
	}
}

// TestPersistGrantRefusesDuplicateKeys: a config.json the agent would
// read differently (a key twice) is never rewritten.
func TestPersistGrantRefusesDuplicateKeys(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.json")
	in := `{"agentShim": {"tools": {"allow": ["Read:a"]}}, "agentShim": {}}`
	if err := os.WriteFile(cfg, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	err := sessions.PersistGrant(context.Background(), cfg, "Bash", "ls")
	if err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Fatalf("got %v, want a duplicate key error", err)
	}
	if data, _ := os.ReadFile(cfg); string(data) != in {
		t.Errorf("config rewritten:\n%s", data)
	}
}
