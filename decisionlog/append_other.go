//go:build !unix

package decisionlog

import (
	"fmt"
	"os"
	"path/filepath"
)

var writeLine = func(f *os.File, b []byte) (int, error) { return f.Write(b) }

// noWait: no flags to add here.
const noWait = 0

// append writes line to the log (rotated as on Unix), without the
// guarantees of O_NOFOLLOW.
func (w *Writer) append(line []byte) error {
	if err := os.MkdirAll(filepath.Dir(w.path), 0o700); err != nil {
		return fmt.Errorf("logging decision: %w", err)
	}
	fi, err := os.Stat(w.path)
	if err == nil && fi.Size() > 0 && fi.Size()+int64(len(line)) > w.max {
		rerr := w.rotate(func(cur os.FileInfo) bool { return os.SameFile(cur, fi) }, int64(len(line)))
		fi, err = os.Stat(w.path)
		if rerr != nil && err == nil && fi.Size() > 0 && fi.Size()+int64(len(line)) > w.ceiling() {
			return fmt.Errorf("logging decision to %s: the log is at twice its size bound and cannot be rotated: %w", w.path, rerr)
		}
	}
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("logging decision: %w", err)
	}
	defer f.Close()
	if _, err := writeLine(f, line); err != nil {
		return fmt.Errorf("logging decision to %s: %w", w.path, err)
	}
	return nil
}

// lostPending reports whether lines lost before are waiting to be counted.
func lostPending(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
