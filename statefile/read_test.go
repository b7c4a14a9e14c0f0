//go:build unix

package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// strange makes the file at path something a reader must refuse: a FIFO
// with no writer (an open would wait for one forever), a link to
// /dev/zero (endless), or a directory.
var strange = []struct {
	name string
	make func(t *testing.T, path string)
}{
	{"fifo", func(t *testing.T, path string) {
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}},
	{"dev-zero", func(t *testing.T, path string) {
		if err := os.Symlink("/dev/zero", path); err != nil {
			t.Fatal(err)
		}
	}},
	{"directory", func(t *testing.T, path string) {
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
	}},
}

// within fails the test when f does not return within a few seconds: a
// reader that blocks on a FIFO is the defect under test.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("hung")
	}
}

func TestReadRegularStrange(t *testing.T) {
	for _, tc := range strange {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			tc.make(t, path)
			within(t, func() {
				_, err := ReadRegular(path, MaxConfig)
				t.Logf("error: %v", err)
				if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path) {
					t.Errorf("got %v, want ErrNotRegular naming %s", err, path)
				}
			})
		})
	}
}

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		size, max int
		tooLarge  bool
	}{
		{0, 10, false},
		{10, 10, false},
		{11, 10, true},
		{5000, 4999, true},
		{70000, 1 << 20, false},
	} {
		t.Run(fmt.Sprint(tc.size, "/", tc.max), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprint(tc.size))
			want := bytes.Repeat([]byte("x"), tc.size)
			if err := os.WriteFile(path, want, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadRegular(path, int64(tc.max))
			if tc.tooLarge {
				if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) {
					t.Errorf("got %v, want ErrTooLarge naming the file", err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, want) || got == nil {
				t.Errorf("got %d bytes (nil %v), %v", len(got), got == nil, err)
			}
		})
	}
	if _, err := ReadRegular(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadDirStrange(t *testing.T) {
	for _, tc := range strange[:2] {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "permissions")
			tc.make(t, path)
			within(t, func() {
				_, err := ReadDir(path)
				if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path) {
					t.Errorf("got %v, want ErrNotRegular naming %s", err, path)
				}
			})
		})
	}
	dir := t.TempDir()
	for _, n := range []string{"b", "a", "c"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	ents, err := ReadDir(dir)
	if err != nil || len(ents) != 3 || ents[0].Name() != "a" || ents[2].Name() != "c" {
		t.Errorf("ReadDir: %v %v", ents, err)
	}
	if _, err := ReadDir(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}

// TestWriteSweepsDead: a write removes the temporary files of the same
// file left by a dead writer, and keeps a live writer's, those of other
// files, and those a journal names (WriteTxnTemp's).
func TestWriteSweepsDead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "session.json")
	dead := filepath.Join(dir, TempPrefix(path)+"999999999-1")
	old := filepath.Join(dir, TempPrefix(path)+fmt.Sprint(os.Getppid())+"-2")
	other := filepath.Join(dir, TempPrefix("ticket")+"999999999-3")
	txn := filepath.Join(dir, TxnPrefix(path)+"999999999-4")
	for _, p := range []string{dead, old, other, txn} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A live writer's file is kept however old: there is no lock here.
	past := time.Now().Add(-2 * staleAge)
	os.Chtimes(old, past, past)
	if err := WriteAtomic(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	assertOnly(t, dir, TempPrefix(path)+fmt.Sprint(os.Getppid())+"-2", TxnPrefix(path)+"999999999-4", TempPrefix("ticket")+"999999999-3", "session.json")
	removed, err := RemoveStaleTxn(path)
	if err != nil || len(removed) != 1 || removed[0] != txn {
		t.Errorf("RemoveStaleTxn: %v, %v", removed, err)
	}
}
