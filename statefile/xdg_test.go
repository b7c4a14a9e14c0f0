package statefile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestXDG(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		env               map[string]string
		state, cache, cfg string // "" for an error
	}{
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/state", "/home/u/.cache", "/home/u/.config"},
		{map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/s", "XDG_CACHE_HOME": "/c/", "XDG_CONFIG_HOME": "/k"}, "/s", "/c", "/k"},
		// Relative values are ignored, as the specification says.
		{map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "s", "XDG_CACHE_HOME": "./c", "XDG_CONFIG_HOME": "../k"}, "/home/u/.local/state", "/home/u/.cache", "/home/u/.config"},
		{map[string]string{"XDG_STATE_HOME": "/s"}, "/s", "", ""},
		{map[string]string{"HOME": "relative"}, "", "", ""},
		{nil, "", "", ""},
	}
	for _, tc := range tests {
		t.Logf("env: %v", tc.env)
		for _, c := range []struct {
			f    func(func(string) string) (string, error)
			want string
		}{{StateHome, tc.state}, {cacheHome, tc.cache}, {configHome, tc.cfg}} {
			got, err := c.f(env(tc.env))
			if c.want == "" {
				if err == nil {
					t.Errorf("got %q, want an error", got)
				}
				continue
			}
			if err != nil || got != c.want {
				t.Errorf("got %q, %v, want %q", got, err, c.want)
			}
		}
	}
}

func TestWriteAtomicThroughLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dots", "config.json")
	os.MkdirAll(filepath.Dir(real), 0o700)
	os.WriteFile(real, []byte("old"), 0o640)
	link := filepath.Join(dir, "config.json")
	if err := os.Symlink("dots/config.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(link, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	assertFile(t, real, "new")
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o640 {
		t.Errorf("target mode %v, want 0640 kept", fi.Mode().Perm())
	}
	// Dangling: the target is created.
	dangling := filepath.Join(dir, "d.json")
	os.Symlink(filepath.Join(dir, "dots", "made.json"), dangling)
	if err := WriteAtomic(dangling, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dir, "dots", "made.json"), "x")
	// A loop and a directory are errors.
	os.Symlink("loop2", filepath.Join(dir, "loop1"))
	os.Symlink("loop1", filepath.Join(dir, "loop2"))
	if err := WriteAtomic(filepath.Join(dir, "loop1"), nil, 0o600); err == nil || !strings.Contains(err.Error(), "too many levels") {
		t.Errorf("loop: %v", err)
	}
	os.Symlink("dots", filepath.Join(dir, "dirlink"))
	if err := WriteAtomic(filepath.Join(dir, "dirlink"), nil, 0o600); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("link to a directory: %v", err)
	}
	assertOnly(t, filepath.Join(dir, "dots"), "config.json", "made.json")
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, nil, 0o600)
		old := time.Now().Add(-age)
		os.Chtimes(p, old, old)
		return p
	}
	dead := mk(TempPrefix(path)+"999999999-1", 0)
	oldLive := mk(TempPrefix(path)+strconv.Itoa(os.Getppid())+"-2", 2*staleAge)
	live := mk(TempPrefix(path)+strconv.Itoa(os.Getppid())+"-3", 0)
	mine := mk(TempPrefix(path)+strconv.Itoa(os.Getpid())+"-4", 2*staleAge)
	noPid := mk(TempPrefix(path)+"abc", 0)
	oldNoPid := mk(TempPrefix(path)+"def", 2*staleAge)
	other := mk(TempPrefix(filepath.Join(dir, "other.json"))+"999999999-5", 0)
	removed, err := RemoveStale(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{dead: true, oldLive: true, oldNoPid: true}
	if len(removed) != len(want) {
		t.Errorf("removed %v", removed)
	}
	for _, p := range removed {
		if !want[p] {
			t.Errorf("removed %s", p)
		}
	}
	for _, p := range []string{live, mine, noPid, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed", p)
		}
	}
	if removed, _ := RemoveStaleIn(dir); len(removed) != 1 || removed[0] != other {
		t.Errorf("RemoveStaleIn removed %v, want only %s", removed, other)
	}
}
