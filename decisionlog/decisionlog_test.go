//go:build unix

package decisionlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The helper processes: with DECISIONLOG_HELPER set, the test binary writes
// lines to that log and exits (see TestConcurrentWriters); with
// DECISIONLOG_HOLD, it holds that lock file until its input closes (see
// holdLock).
func TestMain(m *testing.M) {
	if path := os.Getenv("DECISIONLOG_HOLD"); path != "" {
		os.Exit(holdLockHelper(path))
	}
	if path := os.Getenv("DECISIONLOG_HELPER"); path != "" {
		n, _ := strconv.Atoi(os.Getenv("DECISIONLOG_LINES"))
		max, _ := strconv.ParseInt(os.Getenv("DECISIONLOG_MAX"), 10, 64)
		wait, _ := time.ParseDuration(os.Getenv("DECISIONLOG_WAIT"))
		w := NewWriter(path, Options{MaxSize: max, Keep: 1000, Wait: wait})
		writeMany(w, "proc-"+os.Getenv("DECISIONLOG_ID"), n)
		if err := w.Err(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writeMany logs n entries with long, varied commands, so that a torn or
// interleaved line could not pass for valid JSON.
func writeMany(w *Writer, who string, n int) {
	for i := range n {
		w.Log(Entry{
			Layer: LayerHook, Agent: who, Session: who, Verdict: "allow",
			Command: fmt.Sprintf("%s line %d %s", who, i, strings.Repeat("x", 200+i%700)),
			Rule:    &Rule{Text: "git status", List: "allow", File: ".agents/config/permissions/read_only.txt", Line: 3},
		})
	}
}

func pinEnv(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	return dir
}

// countLines checks that every line of the log's files is a whole entry
// and counts them by writer.
func countLines(t *testing.T, path string, keep int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, p := range Files(path, keep) {
		f, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			var e Entry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("%s:%d: torn line: %v: %.120q", p, n, err, sc.Text())
			}
			if !strings.HasPrefix(e.Command, e.Agent+" line ") {
				t.Fatalf("%s:%d: mixed line: %.120q", p, n, sc.Text())
			}
			got[e.Agent]++
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return got
}

// TestConcurrentWriters: 8 goroutines and 2 processes log at once into a
// log small enough to rotate many times: every line is whole JSON and no
// line is lost.
func TestConcurrentWriters(t *testing.T) {
	for _, tc := range []struct {
		max  int64
		wait time.Duration
	}{{8 << 20, 0}, {64 << 10, 0}, {64 << 10, time.Minute}} {
		max := tc.max
		t.Run(fmt.Sprintf("max=%d,wait=%v", max, tc.wait), func(t *testing.T) {
			dir := pinEnv(t)
			path := filepath.Join(dir, "state", "agent-shim", FileName)
			const lines = 400
			var procs []*exec.Cmd
			for i := range 2 {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "DECISIONLOG_HELPER="+path, "DECISIONLOG_LINES="+strconv.Itoa(lines),
					"DECISIONLOG_ID="+strconv.Itoa(i), "DECISIONLOG_MAX="+strconv.FormatInt(max, 10), "DECISIONLOG_WAIT="+tc.wait.String())
				cmd.Stderr = os.Stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				procs = append(procs, cmd)
			}
			w := NewWriter(path, Options{MaxSize: max, Keep: 1000, Wait: tc.wait})
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() { writeMany(w, "goroutine-"+strconv.Itoa(i), lines) })
			}
			wg.Wait()
			for _, p := range procs {
				if err := p.Wait(); err != nil {
					t.Fatalf("helper process: %v", err)
				}
			}
			if err := w.Err(); err != nil {
				t.Fatal(err)
			}
			got := countLines(t, path, 1000)
			if len(got) != 10 {
				t.Errorf("writers seen: %d, want 10: %v", len(got), got)
			}
			for who, n := range got {
				if n != lines {
					t.Errorf("%s: %d lines, want %d", who, n, lines)
				}
			}
			rotated := 0
			for _, p := range Files(path, 1000)[:1000] {
				if _, err := os.Stat(p); err == nil {
					rotated++
				}
			}
			if max < 1<<20 && rotated == 0 {
				t.Errorf("a %d-byte log was never rotated", max)
			}
			if max >= 1<<20 && rotated != 0 {
				t.Errorf("an 8 MiB log was rotated %d times", rotated)
			}
		})
	}
}

func TestRotation(t *testing.T) {
	dir := pinEnv(t)
	path := filepath.Join(dir, "log", FileName)
	w := NewWriter(path, Options{MaxSize: 1000, Keep: 2})
	for i := range 40 {
		w.Log(Entry{Layer: LayerShell, Verdict: "deny", Command: fmt.Sprintf("rm -rf /%03d", i), Time: time.Unix(int64(i), 0)})
	}
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".1", path + ".2"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 1000 {
			t.Errorf("%s: %d bytes, past the 1000-byte bound", p, fi.Size())
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Errorf("%s.3 kept: only 2 rotated files should be", path)
	}
	es, skipped, err := Read(path, 2)
	if err != nil || skipped != 0 {
		t.Fatalf("Read: %d skipped, %v", skipped, err)
	}
	if len(es) == 0 || es[len(es)-1].Command != "rm -rf /039" {
		t.Fatalf("last entry %+v, want rm -rf /039", es[len(es)-1])
	}
	for i := 1; i < len(es); i++ {
		if es[i].Time.Before(es[i-1].Time) {
			t.Fatalf("entries out of order at %d", i)
		}
		n0, _ := strconv.Atoi(strings.TrimPrefix(es[i-1].Command, "rm -rf /"))
		n1, _ := strconv.Atoi(strings.TrimPrefix(es[i].Command, "rm -rf /"))
		if n1 != n0+1 {
			t.Fatalf("entries %d and %d not consecutive: %q, %q", i-1, i, es[i-1].Command, es[i].Command)
		}
	}
}

// A line too long for the bound on an empty file is written, not rotated
// forever.
func TestRotationLongLine(t *testing.T) {
	path := filepath.Join(pinEnv(t), FileName)
	w := NewWriter(path, Options{MaxSize: 100})
	w.Log(Entry{Layer: LayerHook, Verdict: "allow", Command: strings.Repeat("a", 500)})
	w.Log(Entry{Layer: LayerHook, Verdict: "allow", Command: "b"})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	es, _, err := Read(path, 2)
	if err != nil || len(es) != 2 {
		t.Fatalf("got %d entries, %v", len(es), err)
	}
}

func TestReadSkipsDamagedLines(t *testing.T) {
	path := filepath.Join(pinEnv(t), FileName)
	good, _ := Marshal(Entry{Layer: LayerHook, Verdict: "ask", Command: "git push"})
	data := string(good) + "{\"time\":\"2026-01-01T00:00:00Z\",\"verdict\n" + "not json\n" + string(good) + `{"layer":"hook","verdict":"al`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	es, skipped, err := Read(path, 2)
	if err != nil || len(es) != 2 || skipped != 3 {
		t.Fatalf("Read: %d entries, %d skipped, %v; want 2, 3", len(es), skipped, err)
	}
}

// A full disk, an unwritable directory, a link or a FIFO in the log's
// place, and a disk that does not answer: Log returns promptly every time,
// the line is lost, and Err says why.
func TestLogNeverBlocksOrFails(t *testing.T) {
	dir := pinEnv(t)
	entry := Entry{Layer: LayerHook, Verdict: "deny", Command: "rm -rf /"}
	check := func(t *testing.T, w *Writer, wantErr string) {
		t.Helper()
		start := time.Now()
		w.Log(entry)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Log took %v", d)
		}
		if err := w.Err(); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("Err() = %v, want %q", err, wantErr)
		}
	}
	t.Run("disk full", func(t *testing.T) {
		old := writeLine
		t.Cleanup(func() { writeLine = old })
		writeLine = func(int, []byte) (int, error) { return 0, syscall.ENOSPC }
		check(t, NewWriter(filepath.Join(dir, "full", FileName), Options{}), "no space left")
	})
	t.Run("short write", func(t *testing.T) {
		old := writeLine
		t.Cleanup(func() { writeLine = old })
		writeLine = func(fd int, b []byte) (int, error) { return writeOnce(fd, b[:len(b)/2]) }
		check(t, NewWriter(filepath.Join(dir, "short", FileName), Options{}), "short write")
	})
	t.Run("slow disk", func(t *testing.T) {
		old := writeLine
		release, finished := make(chan struct{}), make(chan struct{})
		t.Cleanup(func() { close(release); <-finished; writeLine = old })
		writeLine = func(int, []byte) (int, error) { <-release; close(finished); return 0, syscall.EIO }
		check(t, NewWriter(filepath.Join(dir, "slow", FileName), Options{Wait: 20 * time.Millisecond}), "no answer from the disk")
	})
	t.Run("unwritable", func(t *testing.T) {
		ro := filepath.Join(dir, "ro")
		if err := os.MkdirAll(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		if os.Getuid() == 0 {
			// Root writes into a read-only directory; not into sysfs.
			check(t, NewWriter(filepath.Join("/sys", "agent-shim-test", "agent-shim", FileName), Options{}), "not permitted")
			return
		}
		check(t, NewWriter(filepath.Join(ro, "agent-shim", FileName), Options{}), "permission denied")
	})
	t.Run("state dir is a file", func(t *testing.T) {
		f := filepath.Join(dir, "afile")
		os.WriteFile(f, nil, 0o600)
		check(t, NewWriter(filepath.Join(f, "agent-shim", FileName), Options{}), "not a directory")
	})
	t.Run("link", func(t *testing.T) {
		d := filepath.Join(dir, "link")
		os.MkdirAll(d, 0o700)
		target := filepath.Join(dir, "elsewhere")
		os.Symlink(target, filepath.Join(d, FileName))
		check(t, NewWriter(filepath.Join(d, FileName), Options{}), "too many levels of symbolic links")
		if _, err := os.Stat(target); err == nil {
			t.Errorf("the log followed a link to %s", target)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		d := filepath.Join(dir, "fifo")
		os.MkdirAll(d, 0o700)
		if err := syscall.Mkfifo(filepath.Join(d, FileName), 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
		check(t, NewWriter(filepath.Join(d, FileName), Options{}), "no such device")
	})
}

func TestNilWriter(t *testing.T) {
	var w *Writer
	w.Log(Entry{Verdict: "allow"}) // must not panic
}

func TestPath(t *testing.T) {
	for _, tc := range []struct {
		xdg, home, want string
	}{
		{"/x/state", "/h", "/x/state/agent-shim/decisions.jsonl"},
		{"", "/h", "/h/.local/state/agent-shim/decisions.jsonl"},
		{"rel/state", "/h", "/h/.local/state/agent-shim/decisions.jsonl"},
		{"", "", ""},
		{"", "rel", ""},
	} {
		env := map[string]string{"XDG_STATE_HOME": tc.xdg, "HOME": tc.home}
		got, err := Path(func(k string) string { return env[k] })
		if (err != nil) != (tc.want == "") || got != tc.want {
			t.Errorf("Path(XDG_STATE_HOME=%q HOME=%q) = %q, %v; want %q", tc.xdg, tc.home, got, err, tc.want)
		}
	}
}

func TestMarshalCutsLongFields(t *testing.T) {
	line, err := Marshal(Entry{Layer: LayerRuntime, Verdict: "allow", Command: strings.Repeat("é", 10000),
		Argv: strings.Fields(strings.Repeat("word ", 5000))})
	if err != nil {
		t.Fatal(err)
	}
	if len(line) > 24<<10 {
		t.Errorf("line of %d bytes", len(line))
	}
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.Command, "bytes cut") || !strings.Contains(e.Argv[len(e.Argv)-1], "more words") {
		t.Errorf("not cut: %.80q … %q", e.Command, e.Argv[len(e.Argv)-1])
	}
}
