package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
)

// logAt writes entries for the commands to the log at path through the
// real writer (rotation included).
func logAt(t *testing.T, path string, max int64, cmds ...string) {
	t.Helper()
	w := decisionlog.NewWriter(path, decisionlog.Options{MaxSize: max})
	for _, c := range cmds {
		w.Log(decisionlog.Entry{Time: time.Unix(1700000000, 0), Agent: "codex", Layer: decisionlog.LayerHook, Tool: "Bash", Command: c, Verdict: "allow"})
		if err := w.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// drain reads and commits batches of at most max until the queue is empty
// and returns the commands read.
func drain(t *testing.T, q *Queue, max int) []string {
	t.Helper()
	var got []string
	for range 1000 {
		b, err := q.Next(max)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) == 0 && b.Skipped == 0 {
			return got
		}
		for _, r := range b.Records {
			got = append(got, r.Command)
		}
		if err := q.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the queue never ran dry")
	return nil
}

func cmds(prefix string, n int) []string {
	var s []string
	for i := range n {
		s = append(s, fmt.Sprintf("%s %d", prefix, i))
	}
	return s
}

// TestQueueResume: what was read but not committed (the collector did not
// acknowledge it) is read again; what was committed is not.
func TestQueueResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent-shim", decisionlog.FileName)
	q := NewQueue(path)
	logAt(t, path, 0, cmds("a", 3)...)
	for range 2 { // not committed: the same records again
		b, err := q.Next(10)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) != 3 || b.Records[0].Command != "a 0" {
			t.Fatalf("got %d records (%+v), want a 0..a 2", len(b.Records), b.Records)
		}
	}
	if got := drain(t, q, 2); !slices.Equal(got, cmds("a", 3)) {
		t.Fatalf("got %q", got)
	}
	logAt(t, path, 0, cmds("b", 2)...)
	if got := drain(t, q, 10); !slices.Equal(got, cmds("b", 2)) {
		t.Fatalf("after more lines got %q, want b 0, b 1", got)
	}
}

// TestQueueRotation: the writer rotates the log while it is exported;
// every record is read once, in order, across the renamed files.
func TestQueueRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent-shim", decisionlog.FileName)
	q := NewQueue(path)
	var want, got []string
	for i := range 12 {
		c := cmds(fmt.Sprintf("r%d", i), 3)
		want = append(want, c...)
		logAt(t, path, 700, c...) // about five lines a file
		got = append(got, drain(t, q, 2)...)
	}
	if _, err := os.Stat(path + ".2"); err != nil {
		t.Fatalf("the log never rotated twice: %v", err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// Rotation between exports: two rotations' worth at once.
	c := cmds("burst", 8)
	logAt(t, path, 700, c...)
	if got := drain(t, q, 3); !slices.Equal(got, c) {
		t.Fatalf("after a burst got %q\nwant %q", got, c)
	}
}

// TestQueueLateAppend: a writer that opened the log before a rotation
// appends to the renamed file; that line is read too.
func TestQueueLateAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent-shim", decisionlog.FileName)
	q := NewQueue(path)
	logAt(t, path, 0, "old")
	late, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	drain(t, q, 10)
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	logAt(t, path, 0, "new")
	line, _ := decisionlog.Marshal(decisionlog.Entry{Layer: "hook", Command: "late", Verdict: "deny"})
	if _, err := late.Write(line); err != nil {
		t.Fatal(err)
	}
	got := drain(t, q, 10)
	slices.Sort(got)
	if !slices.Equal(got, []string{"late", "new"}) {
		t.Fatalf("got %q, want late and new", got)
	}
}

// TestQueueLines: a line still being written waits; a damaged line is
// passed over and counted; a tool_use_id is read.
func TestQueueLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent-shim", decisionlog.FileName)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	q := NewQueue(path)
	write := func(s string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write("{\"time\":\"2026-01-01T00:00:00Z\",\"layer\":\"hook\",\"tool\":\"Bash\",\"tool_use_id\":\"toolu_01\",\"command\":\"ls\",\"verdict\":\"allow\"}\nnot json\n{\"time\":\"2026-01-01T00:00:00Z\",\"layer\":\"hook\",\"command\":\"half")
	b, err := q.Next(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Records) != 1 || b.Records[0].ToolUseID != "toolu_01" || b.Skipped != 1 {
		t.Fatalf("got %+v (skipped %d), want one record with tool_use_id toolu_01 and one skipped", b.Records, b.Skipped)
	}
	if err := q.Commit(b); err != nil {
		t.Fatal(err)
	}
	if b, _ := q.Next(10); len(b.Records)+b.Skipped != 0 {
		t.Fatalf("a half-written line was read: %+v", b)
	}
	write("\",\"verdict\":\"ask\"}\n")
	if got := drain(t, q, 10); !slices.Equal(got, []string{"half"}) {
		t.Fatalf("got %q, want the completed line", got)
	}
}

// TestQueueNewFile: a log replaced by a new file that got the old inode
// back (truncated and rewritten, or shorter than the position) is read
// from its start.
func TestQueueNewFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		next []string
	}{
		{"shorter", []string{"x"}},
		{"longer", cmds("a much longer command that goes past the old position", 6)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agent-shim", decisionlog.FileName)
			q := NewQueue(path)
			logAt(t, path, 0, cmds("first", 3)...)
			drain(t, q, 10)
			if err := os.Truncate(path, 0); err != nil { // same inode
				t.Fatal(err)
			}
			w := decisionlog.NewWriter(path, decisionlog.Options{})
			for _, c := range tc.next {
				w.Log(decisionlog.Entry{Time: time.Unix(1800000000, 0), Layer: "shell", Command: c, Verdict: "deny"})
			}
			if got := drain(t, q, 10); !slices.Equal(got, tc.next) {
				t.Fatalf("got %q, want %q", got, tc.next)
			}
		})
	}
}
