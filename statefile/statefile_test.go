package statefile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := WriteAtomic(path, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, "one")
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("new file mode %v, want 0640", fi.Mode().Perm())
	}
	// Replacing keeps the existing mode.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, "two")
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v, want 0600", fi.Mode().Perm())
	}
	assertOnly(t, dir, "config.json")
}

func TestWriteAtomicErrors(t *testing.T) {
	dir := t.TempDir()
	// The directory does not exist.
	if err := WriteAtomic(filepath.Join(dir, "missing", "config.json"), []byte("x"), 0o600); err == nil {
		t.Error("missing directory: got no error")
	}
	// The rename fails: the target is a non-empty directory.
	target := filepath.Join(dir, "config.json")
	if err := os.MkdirAll(filepath.Join(target, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	err := WriteAtomic(target, []byte("x"), 0o600)
	if err == nil || !strings.Contains(err.Error(), "writing "+target) {
		t.Errorf("rename over a directory: got %v", err)
	}
	assertOnly(t, dir, "config.json")
}

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config.json")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".lock"); err != nil {
		t.Errorf("no sidecar lock file: %v", err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Errorf("TryLock while held: got %v, want ErrLocked", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock with a deadline while held: got %v", err)
	}
	// A waiting Lock gets it once released.
	got := make(chan error, 1)
	go func() {
		unlock2, err := Lock(context.Background(), path)
		if err == nil {
			err = unlock2()
		}
		got <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	unlock, err = TryLock(path)
	if err != nil {
		t.Fatalf("TryLock when free: %v", err)
	}
	unlock()
}

func TestDigest(t *testing.T) {
	a, b := Digest("command(regex:^ls$)"), Digest("command(regex:^ls -l$)")
	if len(a) != 32 || a == b || a != Digest("command(regex:^ls$)") {
		t.Errorf("digests %q and %q", a, b)
	}
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s: got %q, want %q", path, got, want)
	}
}

// assertOnly checks that dir holds exactly the named entries: no
// temporary file was left behind.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff(names, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", dir, diff)
	}
}
