//go:build unix

// Package locktest has a second process hold a lock file, for the tests
// of what must not wait for a lock: any process that can read a lock file
// can hold its lock (flock needs no write access), one a line left behind
// included.
//
// A test binary that uses Hold calls Main first thing in its TestMain: run
// as the holder, the binary holds the lock and exits when told.
package locktest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// envHold names the lock file the test binary, run as the holder, holds.
const envHold = "AGENT_SHIM_LOCKTEST_HOLD"

// Main makes the test binary the holder when Hold started it: it opens
// the lock file read-only, takes its lock, says so on stdout and holds it
// until its standard input closes, then exits. Otherwise it returns.
func Main() {
	path := os.Getenv(envHold)
	if path == "" {
		return
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err == nil {
		err = syscall.Flock(fd, syscall.LOCK_EX)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// Hold has another process hold the lock of the file at path (created
// empty when missing, with its directory) until the test ends or release
// is called.
func Hold(t testing.TB, path string) (release func()) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHold+"="+path)
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
		t.Fatalf("the lock holder said %q, %v (does TestMain call locktest.Main?)", line, err)
	}
	return release
}

// Within runs f and returns how long it took; it fails the test, rather
// than hanging it, when f has not returned within limit.
func Within(t testing.TB, limit time.Duration, f func()) time.Duration {
	t.Helper()
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		f()
		done <- time.Since(start)
	}()
	select {
	case d := <-done:
		return d
	case <-time.After(limit):
		t.Fatalf("still waiting after %v: it waits for a lock or a file another process holds", limit)
		return limit
	}
}
