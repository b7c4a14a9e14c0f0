package decisionlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync/atomic"
)

// Lines lost. A line that cannot be written (a full disk, the rotation
// lock held by another process while the log is at its ceiling) is
// counted beside the log, in path.lost: one newline per line, so that
// `wc -l` counts them too. The next line written takes the count (a
// rename: exactly one writer gets it), carries it as Entry.Lost, and the
// file goes. Counting never waits and never fails a decision: a count
// that cannot be kept (the disk is full for it too) is lost with its line,
// and a line counted at the moment another writer takes the count may go
// uncounted.

// maxLost bounds the count's file: past it lines lost are no longer
// counted, and Entry.Lost is a floor.
const maxLost = 64 << 10

// claims numbers this process's claims of the count, so that two
// goroutines never rename it to one name.
var claims atomic.Uint64

// lostPath is where the lines lost are counted.
func (w *Writer) lostPath() string { return w.path + ".lost" }

// write writes e as one line, with the count of the lines lost before
// it; a line that cannot be written is counted lost, with the count it
// took.
func (w *Writer) write(e Entry) error {
	lost := w.takeLost()
	e.Lost += lost
	line, err := Marshal(e)
	if err == nil {
		err = w.append(line)
	}
	if err != nil {
		w.countLost(lost + 1)
	}
	return err
}

// takeLost takes the count of lines lost, or 0 when there is none (one
// lstat, the common case).
func (w *Writer) takeLost() int {
	p := w.lostPath()
	if !lostPending(p) {
		return 0
	}
	claim := p + "." + strconv.Itoa(os.Getpid()) + "." + strconv.FormatUint(claims.Add(1), 10)
	if os.Rename(p, claim) != nil {
		return 0 // another writer took it
	}
	fi, err := os.Lstat(claim)
	os.Remove(claim)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return int(min(fi.Size(), maxLost))
}

// countLost adds n lines to the count of lines lost.
func (w *Writer) countLost(n int) {
	f, err := os.OpenFile(w.lostPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE|noWait, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	if n = min(n, maxLost-int(fi.Size())); n > 0 {
		f.Write(bytes.Repeat([]byte{'\n'}, n))
	}
}

// Lost returns how many lines of the log at path were lost since the last
// line written to it: a count no line carries yet (see Entry.Lost). When
// it stays above zero, no line can be written: the disk is full, or a
// process holds the rotation lock (path.lock) and the log is at twice its
// size bound.
func Lost(path string) (int, error) {
	fi, err := os.Lstat(path + ".lost")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the count of decision log lines lost: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("reading the count of decision log lines lost: %s is not a regular file", path+".lost")
	}
	return int(min(fi.Size(), maxLost)), nil
}
