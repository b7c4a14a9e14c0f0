package telemetry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/statefile"
)

// maxFirstLine bounds the first line read to tell a file from a new one
// that got its inode back.
const maxFirstLine = 64 << 10

// Cursor is what has been exported: a position in each log file.
type Cursor struct {
	Files []Position `json:"files"`
}

// Position is how far one log file has been exported.
type Position struct {
	Dev    int64  `json:"dev"`
	Ino    int64  `json:"ino"`
	Offset int64  `json:"offset"`
	Head   string `json:"head"` // a digest of the file's first line, "" before there is one
	Name   string `json:"name"` // where it was last seen, for people
}

// Record is one decision read from the log.
type Record struct {
	decisionlog.Entry
	// ToolUseID is the agent's id of the call, when the log line has one
	// (tool_use_id).
	ToolUseID string
}

// Batch is records read from the log and the cursor past them.
type Batch struct {
	Records []Record
	Skipped int // lines that were not decisions (damaged), passed over
	next    Cursor
}

// Queue reads the decision log from the saved cursor.
type Queue struct {
	Log  string // decisions.jsonl
	Keep int    // rotated files kept (decisionlog.Options.Keep); 0 is 2
}

// NewQueue returns the queue of the log at logPath.
func NewQueue(logPath string) *Queue { return &Queue{Log: logPath} }

// cursorPath is where the cursor is saved.
func (q *Queue) cursorPath() string { return stateFile(q.Log, CursorName) }

// Cursor reads the saved cursor; none saved is the zero cursor (export
// everything the log holds).
func (q *Queue) Cursor() (Cursor, error) {
	var c Cursor
	data, err := statefile.ReadRegular(q.cursorPath(), 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("reading the export cursor: %w", err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("reading the export cursor %s: %w", q.cursorPath(), err)
	}
	return c, nil
}

// Next reads up to max records past the saved cursor, oldest file first.
// Only whole lines are read: a line a writer is still writing waits.
func (q *Queue) Next(max int) (*Batch, error) {
	c, err := q.Cursor()
	if err != nil {
		return nil, err
	}
	keep := q.Keep
	if keep <= 0 {
		keep = 2
	}
	b := &Batch{}
	for _, p := range decisionlog.Files(q.Log, keep) {
		pos, ok, err := q.readFile(p, c, b, max)
		if err != nil {
			return nil, err
		}
		if ok {
			b.next.Files = append(b.next.Files, pos)
		}
	}
	return b, nil
}

// readFile reads the records of one file past its position into b, up to
// max records in b, and returns the position after them; ok is false when
// the file does not exist.
func (q *Queue) readFile(path string, c Cursor, b *Batch, max int) (Position, bool, error) {
	f, err := statefile.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Position{}, false, nil
	}
	if err != nil {
		return Position{}, false, fmt.Errorf("reading the decision log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Position{}, false, fmt.Errorf("reading the decision log: %w", err)
	}
	id, _ := statefile.IdentityOf(fi)
	head, err := firstLine(f)
	if err != nil {
		return Position{}, false, fmt.Errorf("reading the decision log %s: %w", path, err)
	}
	pos := Position{Dev: id.Dev, Ino: id.Ino, Head: head, Name: path}
	for _, old := range c.Files {
		// The same file: same inode (or, where the system has none, the
		// same name), the same first line, and not shorter than the
		// position; else it is a new file on a reused inode, read from
		// its start.
		same := old.Dev == id.Dev && old.Ino == id.Ino && (id.Ino != 0 || old.Name == path)
		if same && old.Head == head && old.Offset <= fi.Size() {
			pos.Offset = old.Offset
			break
		}
	}
	if len(b.Records) >= max || pos.Offset >= fi.Size() {
		return pos, true, nil
	}
	if _, err := f.Seek(pos.Offset, io.SeekStart); err != nil {
		return Position{}, false, fmt.Errorf("reading the decision log %s: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, fi.Size()-pos.Offset))
	if err != nil {
		return Position{}, false, fmt.Errorf("reading the decision log %s: %w", path, err)
	}
	for len(b.Records) < max {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // not a whole line yet
		}
		line := data[:i+1]
		data = data[i+1:]
		pos.Offset += int64(len(line))
		r, ok := parse(line)
		switch {
		case ok:
			b.Records = append(b.Records, r)
		case len(bytes.TrimSpace(line)) > 0:
			b.Skipped++
		}
	}
	return pos, true, nil
}

// parse reads one log line.
func parse(line []byte) (Record, bool) {
	var r Record
	if json.Unmarshal(line, &r.Entry) != nil || r.Verdict == "" {
		return r, false
	}
	var ids struct {
		ToolUseID string `json:"tool_use_id"`
	}
	if json.Unmarshal(line, &ids) == nil {
		r.ToolUseID = ids.ToolUseID
	}
	return r, true
}

// Commit saves the cursor past b: call it once the collector has
// acknowledged b's records.
func (q *Queue) Commit(b *Batch) error {
	data, err := json.MarshalIndent(b.next, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(q.cursorPath()), CursorName+".*")
	if err != nil {
		return fmt.Errorf("saving the export cursor: %w", err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), q.cursorPath())
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("saving the export cursor: %w", err)
	}
	return nil
}

// firstLine returns a digest of f's first whole line (every line begins
// with its time, to the nanosecond), or "" when there is none yet.
func firstLine(f *os.File) (string, error) {
	buf := make([]byte, 4096)
	h := sha256.New()
	for off := int64(0); off < maxFirstLine; {
		n, err := f.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			h.Write(buf[:i])
			return hex.EncodeToString(h.Sum(nil)[:16]), nil
		}
		h.Write(buf[:n])
		off += int64(n)
		if errors.Is(err, io.EOF) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}
