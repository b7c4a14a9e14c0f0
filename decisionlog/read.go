package decisionlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/agent-shim/agent-shim/statefile"
)

// maxLine bounds a line read back; longer lines are skipped as damaged.
const maxLine = 1 << 20

// Read returns the entries of the log at path and its rotated files
// (path.2, path.1, path: Keep of them, default 2), oldest first, in the
// order of their times (lines that a writer holding the file before a
// rotation appended to the rotated file are put back in place). Lines
// that are not entries (cut short by a writer that died, or damaged) are
// skipped and counted. Missing files are no error.
func Read(path string, keep int) (entries []Entry, skipped int, err error) {
	for _, p := range Files(path, keep) {
		f, err := statefile.OpenRegular(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("reading the decision log: %w", err)
		}
		es, n, err := ReadFrom(f)
		f.Close()
		if err != nil {
			return nil, 0, fmt.Errorf("reading the decision log %s: %w", p, err)
		}
		entries = append(entries, es...)
		skipped += n
	}
	slices.SortStableFunc(entries, func(a, b Entry) int { return a.Time.Compare(b.Time) })
	return entries, skipped, nil
}

// ReadFrom reads log lines from r, skipping and counting those that are
// not entries.
func ReadFrom(r io.Reader) (entries []Entry, skipped int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line too long for the buffer: read on to its end.
			n := len(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				n += len(line)
			}
			skipped++
			if err != nil {
				break
			}
			continue
		}
		if len(line) > 0 {
			var e Entry
			if len(line) > maxLine || json.Unmarshal(line, &e) != nil || e.Verdict == "" {
				if len(trimLine(string(line))) > 0 {
					skipped++
				}
			} else {
				entries = append(entries, e)
			}
		}
		if errors.Is(err, io.EOF) {
			return entries, skipped, nil
		}
		if err != nil {
			return entries, skipped, err
		}
	}
	if errors.Is(err, io.EOF) {
		return entries, skipped, nil
	}
	return entries, skipped, err
}
