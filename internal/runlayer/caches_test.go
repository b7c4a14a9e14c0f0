package runlayer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/treecache"
)

// The tree's caches: a planted directory refuses the line, with the way
// out; no home leaves the line without caches, and says so.
func TestTreeEnv(t *testing.T) {
	home := t.TempDir()
	environ := []string{"HOME=" + home, "PATH=/bin"}
	var stderr bytes.Buffer
	r := &Run{Stderr: &stderr, Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}}
	env, c, err := r.treeEnv(environ)
	if err != nil || c == nil || !slices.Contains(env, "GOCACHE="+filepath.Join(home, ".cache", treecache.Name, "go-build")) || stderr.Len() != 0 {
		t.Fatalf("treeEnv: %v %v %q %s", c, err, env, stderr.String())
	}

	root := filepath.Join(home, ".cache", treecache.Name)
	os.RemoveAll(root)
	if err := os.Symlink(home, root); err != nil {
		t.Fatal(err)
	}
	_, _, err = r.treeEnv(environ)
	var h *Hinted
	if !errors.Is(err, treecache.ErrNotOwn) || !errors.As(err, &h) || h.Hint != "remove "+root+": agent-shim makes a new one" {
		t.Errorf("a planted link: %v", err)
	}

	r.Getenv = func(string) string { return "" }
	env, c, err = r.treeEnv(environ)
	if err != nil || c != nil || !slices.Equal(env, environ) || !strings.Contains(stderr.String(), "agent-shim: warning: ") {
		t.Errorf("no home: %v %v %q %q", c, err, env, stderr.String())
	}
	r.trimCaches(nil) // no caches, nothing to trim
}
