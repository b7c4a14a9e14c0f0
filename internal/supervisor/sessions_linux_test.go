//go:build linux && (amd64 || arm64)

package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func init() {
	// line TOP SCRIPT [off]: run SCRIPT in TOP under Run with TOP's
	// protected paths, then undo; print what each says.
	helpers["line"] = func(args []string) int {
		if len(args) > 2 && args[2] == "off" {
			namespaces = false
		}
		snap, err := TakeSnapshot([]string{args[0]})
		if err != nil {
			fmt.Println("snapshot:", err)
			return 1
		}
		st, err := Run(context.Background(), Config{
			Path: "/bin/bash", Argv: []string{"bash", "-c", args[1]}, Env: []string{"PATH=/usr/bin:/bin"},
			Dir: args[0], Stdout: os.Stdout, Stderr: os.Stderr, Report: os.Stderr,
			Decide: func(Exec) Verdict { return Verdict{Allow: true} }, Confine: true,
			Writable: []string{args[0], "/dev/null"}, Protect: snap,
		})
		fmt.Printf("prevented=%v ended=%d err=%v\n", st.Prevented, st.Ended, err)
		changed, err := snap.Restore(nil)
		fmt.Printf("undone %q %v\n", changed, err)
		return 0
	}
}

// Two sessions on one checkout: what the person (or another session)
// changes of the protected paths while a line runs is not the line's,
// and where the line had them read-only its undo leaves the change
// alone; a line's end ends only what it started, not what another
// session's line runs.
func TestRunTwoSessions(t *testing.T) {
	needKernel(t)
	t.Run("edits", func(t *testing.T) {
		top := t.TempDir()
		files(t, top, map[string]string{".git/config": "[core]\n", ".git/hooks/": ""})
		cmd := exec.Command(os.Args[0], "line", top, "while [ ! -e go ]; do read -t 0.02 <> <(:); done; echo line > src.txt")
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The person, meanwhile: a change to .git/config, a hook of
		// their own.
		time.Sleep(100 * time.Millisecond)
		files(t, top, map[string]string{".git/config": "[core]\n[user]\n\tname = person\n", ".git/hooks/pre-push": "person's\n", "go": ""})
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		s := out.String()
		if !strings.Contains(s, "prevented=true") {
			skipLacking(t, "no mount namespace here:\n%s", s)
		}
		if data, _ := os.ReadFile(filepath.Join(top, ".git/config")); string(data) != "[core]\n[user]\n\tname = person\n" {
			t.Errorf("the person's change to .git/config was undone: %q\n%s", data, s)
		}
		if _, err := os.Stat(filepath.Join(top, ".git/hooks/pre-push")); err != nil {
			t.Errorf("the person's hook was undone\n%s", s)
		}
		if !strings.Contains(s, `undone [] <nil>`) {
			t.Errorf("the undo named changes:\n%s", s)
		}
	})
	t.Run("processes", func(t *testing.T) {
		for _, mode := range []string{"off", ""} {
			top := t.TempDir()
			files(t, top, map[string]string{".git/config": "[core]\n"})
			// B's line runs a second, A's leaves a sleeper and ends.
			b := exec.Command(os.Args[0], "line", top, "sleep 1; echo done > b-done", mode)
			if err := b.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			a, err := exec.Command(os.Args[0], "line", top, "exec >/dev/null 2>&1; sleep 10 &", mode).CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, a)
			}
			if mode == "off" && !strings.Contains(string(a), "ended=1") {
				t.Errorf("A's sleeper was not ended:\n%s", a)
			}
			if err := b.Wait(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(top, "b-done")); err != nil {
				t.Errorf("mode %q: B's line was ended by A's", mode)
			}
		}
	})
}
