//go:build unix

package approvals

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The approval log is opened without waiting on a FIFO planted in its
// place and never through a link.
func TestOpenPlanted(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := Open(fifo)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("opened a FIFO as the approval log")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("opening a FIFO planted as the approval log waits for a reader")
	}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, nil, 0o600)
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if f, err := Open(link); err == nil {
		f.Close()
		t.Error("opened the approval log through a link")
	}
}
