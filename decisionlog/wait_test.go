//go:build unix

package decisionlog

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdLockHelper is the helper process of holdLock: it opens path
// read-only (flock needs no write access: any process of the tree can
// hold any lock file it can read), takes it, says so, and holds it until
// its input closes.
func holdLockHelper(path string) int {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// holdLock has another process hold the lock file at path (created when
// missing, its time set to mtime) until the returned release is called
// (or the test ends).
func holdLock(t *testing.T, path string, mtime time.Time) (release func()) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DECISIONLOG_HOLD="+path)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			in.Close()
			cmd.Wait()
		}
	}
	t.Cleanup(release)
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		t.Fatalf("the lock holder said %q, %v", line, err)
	}
	return release
}

// logWithin logs e and fails the test, rather than hanging it, when Log
// does not return within limit; it returns how long Log took.
func logWithin(t *testing.T, w *Writer, e Entry, limit time.Duration) time.Duration {
	t.Helper()
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		w.Log(e)
		done <- time.Since(start)
	}()
	select {
	case d := <-done:
		return d
	case <-time.After(limit):
		t.Fatalf("Log did not return in %v: it waits for the lock", limit)
		return 0
	}
}

// fillLog writes whole lines to the log at path until it holds at least
// size bytes.
func fillLog(t *testing.T, path string, size int64) {
	t.Helper()
	line, _ := Marshal(Entry{Layer: LayerHook, Verdict: "allow", Command: "filler " + strings.Repeat("x", 900)})
	var b []byte
	for int64(len(b)) < size {
		b = append(b, line...)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestRotationLockHeld: a process the line left behind holds the rotation
// lock, read-only, while the log is past its size bound. Every Log
// returns at once (before, the first one waited for the lock for good);
// the lines go into the full log up to twice its bound, then are lost and
// counted, and the first line written once the lock is free carries the
// count.
func TestRotationLockHeld(t *testing.T) {
	const max = 16 << 10
	path := filepath.Join(pinEnv(t), "state", "agent-shim", FileName)
	fillLog(t, path, max)
	release := holdLock(t, path+".lock", time.Now().Add(-time.Hour))
	w := NewWriter(path, Options{MaxSize: max, Keep: 2})
	entry := func(i int) Entry {
		return Entry{Layer: LayerHook, Verdict: "deny", Command: fmt.Sprintf("rm -rf /%04d %s", i, strings.Repeat("y", 500))}
	}
	// Into the full file, up to the ceiling.
	i := 0
	for ; fileSize(t, path)+600 <= 2*max; i++ {
		if d := logWithin(t, w, entry(i), 5*time.Second); d > time.Second {
			t.Errorf("line %d took %v", i, d)
		}
		if err := w.Err(); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
	}
	if _, err := os.Stat(path + ".1"); err == nil {
		t.Fatal("the log was rotated under another process's lock")
	}
	es, _, err := Read(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := es[len(es)-1].Command; !strings.HasPrefix(got, fmt.Sprintf("rm -rf /%04d ", i-1)) {
		t.Fatalf("last line %.20q, want line %d", got, i-1)
	}
	// Past it, lost and counted.
	const lost = 5
	for j := range lost {
		logWithin(t, w, entry(i+j), 5*time.Second)
		if err := w.Err(); err == nil || !strings.Contains(err.Error(), "cannot be rotated") {
			t.Fatalf("Err() = %v, want the line lost", err)
		}
	}
	if n, err := Lost(path); n != lost || err != nil {
		t.Fatalf("Lost = %d, %v; want %d", n, err, lost)
	}
	if fileSize(t, path) > 2*max {
		t.Fatalf("the log grew to %d bytes, past twice its bound", fileSize(t, path))
	}
	// The lock free again: rotated, and the count carried.
	release()
	w = NewWriter(path, Options{MaxSize: max, Keep: 2})
	logWithin(t, w, Entry{Layer: LayerShell, Verdict: "ask", Command: "git push"}, 5*time.Second)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	es, skipped, err := ReadFrom(f)
	if err != nil || skipped != 0 || len(es) != 1 {
		t.Fatalf("the new log: %d entries, %d skipped, %v; want 1 entry", len(es), skipped, err)
	}
	if es[0].Command != "git push" || es[0].Lost != lost {
		t.Errorf("first line after the lock came free: %q lost=%d, want git push lost=%d", es[0].Command, es[0].Lost, lost)
	}
	if n, err := Lost(path); n != 0 || err != nil {
		t.Errorf("Lost = %d, %v after the count was carried", n, err)
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Errorf("not rotated: %v", err)
	}
}

// TestRotationLockHeldFresh: a holder that looks like a rotator (the lock
// file's time is now) is waited for, rotationWait at most; then the line
// goes into the full file.
func TestRotationLockHeldFresh(t *testing.T) {
	const max = 16 << 10
	path := filepath.Join(pinEnv(t), "state", "agent-shim", FileName)
	fillLog(t, path, max)
	holdLock(t, path+".lock", time.Now())
	w := NewWriter(path, Options{MaxSize: max})
	before := fileSize(t, path)
	d := logWithin(t, w, Entry{Layer: LayerHook, Verdict: "allow", Command: "make"}, 5*time.Second)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	if d < rotationWait || d > rotationWait+time.Second {
		t.Errorf("Log took %v, want about %v", d, rotationWait)
	}
	if fileSize(t, path) <= before {
		t.Error("the line was not written")
	}
}

// TestLostCounted: lines a full disk loses are counted, and the next line
// written carries the count.
func TestLostCounted(t *testing.T) {
	path := filepath.Join(pinEnv(t), "state", "agent-shim", FileName)
	w := NewWriter(path, Options{})
	w.Log(Entry{Layer: LayerHook, Verdict: "allow", Command: "ls"})
	old := writeLine
	t.Cleanup(func() { writeLine = old })
	writeLine = func(int, []byte) (int, error) { return 0, syscall.ENOSPC }
	for range 3 {
		w.Log(Entry{Layer: LayerHook, Verdict: "deny", Command: "rm -rf /"})
	}
	if n, err := Lost(path); n != 3 || err != nil {
		t.Fatalf("Lost = %d, %v; want 3", n, err)
	}
	writeLine = old
	w.Log(Entry{Layer: LayerHook, Verdict: "allow", Command: "make"})
	w.Log(Entry{Layer: LayerHook, Verdict: "allow", Command: "make test"})
	es, _, err := Read(path, 2)
	if err != nil || len(es) != 3 {
		t.Fatalf("Read: %d entries, %v; want 3", len(es), err)
	}
	for i, want := range []int{0, 3, 0} {
		if es[i].Lost != want {
			t.Errorf("line %d (%s): lost=%d, want %d", i, es[i].Command, es[i].Lost, want)
		}
	}
	if n, err := Lost(path); n != 0 || err != nil {
		t.Errorf("Lost = %d, %v after the count was carried", n, err)
	}
}

// BenchmarkLogLockHeld is one Log with the rotation lock held by another
// open file description (as a process left behind would hold it) and the
// log past its bound ("past"), past twice its bound ("ceiling": the line
// is lost and counted), and, for comparison, with the lock free and the
// log under its bound ("free").
//
//	go test ./decisionlog -run '^$' -bench BenchmarkLogLockHeld -benchtime 2000x
func BenchmarkLogLockHeld(b *testing.B) {
	const max = 1 << 20
	e := Entry{Agent: "claude-code", Session: "0f7c1d9e-5a7b-4c1e-9a55-2b1f0e8f4d3a", Layer: LayerHook,
		Cwd: "/home/dev/fuchsia", Tool: "Bash", Command: "git status && fx build", Verdict: "allow"}
	for _, tc := range []struct {
		name string
		size int64
		held bool
	}{{"free", 0, false}, {"past", max + 1, true}, {"ceiling", 2 * max, true}} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), FileName)
			reset := func() {
				if err := os.WriteFile(path, make([]byte, tc.size), 0o600); err != nil {
					b.Fatal(err)
				}
				os.Remove(path + ".lost")
			}
			reset()
			if tc.held {
				os.WriteFile(path+".lock", nil, 0o600)
				long := time.Now().Add(-time.Hour)
				os.Chtimes(path+".lock", long, long)
				fd, err := syscall.Open(path+".lock", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
				if err != nil {
					b.Fatal(err)
				}
				defer syscall.Close(fd)
				if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
					b.Fatal(err)
				}
			}
			w := NewWriter(path, Options{MaxSize: max})
			for i := 0; b.Loop(); i++ {
				if i%500 == 499 {
					b.StopTimer()
					reset()
					b.StartTimer()
				}
				w.Log(e)
			}
			if tc.name == "ceiling" {
				if n, _ := Lost(path); n == 0 {
					b.Fatal("no line lost at the ceiling")
				}
			} else if err := w.Err(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
