package statefile

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestIdentity(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	id := func() Identity {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := IdentityOf(fi)
		if !ok {
			t.Fatal("no inode or change time on this system")
		}
		return got
	}
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	first := id()
	if again := id(); again != first {
		t.Errorf("unchanged file: %+v then %+v", first, again)
	}
	// An atomic write of the same bytes, with the old times, is still a
	// new version: the inode differs.
	old := time.Unix(0, first.Mtime)
	if err := WriteAtomic(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	renamed := id()
	if renamed == first || renamed.Ino == first.Ino {
		t.Errorf("rename over the file kept its identity: %+v", renamed)
	}
	// An edit in place changes the change time even when size and
	// modification time are put back.
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(path, []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if edited := id(); edited == renamed {
		t.Errorf("edit in place kept the identity: %+v", edited)
	}
}
