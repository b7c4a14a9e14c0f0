package policycheck

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
)

var update = flag.Bool("u", false, "update golden files")

// fixture copies testdata/<name> into a temporary checkout, makes each
// vendor/<x> a git repository (an overlay must be one), and pins HOME and
// the XDG directories under the test's temporary directory.
func fixture(t *testing.T, name string) string {
	t.Helper()
	tmp := pinHome(t)
	root := filepath.Join(tmp, name)
	src := filepath.Join("testdata", name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".jiri_root"), 0o755); err != nil {
		t.Fatal(err)
	}
	vendors, _ := os.ReadDir(filepath.Join(root, "vendor"))
	for _, v := range vendors {
		if _, err := git.PlainInit(filepath.Join(root, "vendor", v.Name()), false); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// golden compares got with testdata/<name>, or writes it with -u.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -u to write it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (-u updates it):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

func writeFile(root, rel, content string) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// pinHome points HOME and the XDG directories into a temporary directory,
// which it returns: the never-allow list spells out the home directory.
func pinHome(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, filepath.Join(tmp, "env", k))
	}
	return tmp
}
