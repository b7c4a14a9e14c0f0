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

// leave starts what a line leaves running: a background job, one that
// left its session (setsid) with a child of its own, each of which
// writes a hook a little after the line, and a server (bash builtins
// only) that records, every 50 ms, whether it still runs and whether it
// may write a hook.
const leave = `
exec >/dev/null 2>&1
sleep 0.3 && echo "touch pwned" > .git/hooks/post-checkout &
setsid sh -c '(sleep 0.3; echo "touch pwned" > .git/hooks/post-merge) & sleep 5' &
(exec 9<> <(:); for ((i = 1; i <= 40; i++)); do echo "alive $i" >> server.log; { echo x > .git/hooks/post-rewrite; } 2>/dev/null && echo "wrote $i" >> server.log; read -t 0.05 -u 9; done) &
`

func init() {
	// leave TOP [off]: run leave in TOP under Run with its protected
	// paths, and print what Run says.
	helpers["leave"] = func(args []string) int {
		if len(args) > 1 && args[1] == "off" {
			namespaces = false
		}
		snap, err := TakeSnapshot([]string{args[0]})
		if err != nil {
			fmt.Println("snapshot:", err)
			return 1
		}
		st, err := Run(context.Background(), Config{
			Path: "/bin/bash", Argv: []string{"bash", "-c", leave}, Env: []string{"PATH=/usr/bin:/bin"},
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

// Where only the undo holds (no mount namespace, forced here), what a
// line leaves running ends with it, a process that left the session
// and its child too: nothing writes after the line. Where the protected
// paths are read-only, what it leaves running goes on (a dev server) and
// cannot write them.
func TestRunSurvivors(t *testing.T) {
	needKernel(t)
	for _, mode := range []string{"off", "prevented"} {
		t.Run(mode, func(t *testing.T) {
			top := t.TempDir()
			files(t, top, map[string]string{".git/config": "[core]\n", ".git/hooks/": ""})
			args := []string{"leave", top}
			if mode == "off" {
				args = append(args, "off")
			}
			out, err := exec.Command(os.Args[0], args...).CombinedOutput()
			s := string(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, s)
			}
			if mode == "prevented" && !strings.Contains(s, "prevented=true") {
				skipLacking(t, "no mount namespace here:\n%s", s)
			}
			time.Sleep(time.Second)
			log, _ := os.ReadFile(filepath.Join(top, "server.log"))
			for _, hook := range []string{"post-checkout", "post-merge", "post-rewrite"} {
				if _, err := os.Lstat(filepath.Join(top, ".git/hooks", hook)); err == nil {
					t.Errorf("%s was written after the line:\n%s%s", hook, s, log)
				}
			}
			alive := strings.Count(string(log), "alive")
			switch mode {
			case "off":
				if !strings.Contains(s, "prevented=false") || strings.Contains(s, "ended=0") || alive > 3 {
					t.Errorf("the survivors were not ended (%d rounds of the server):\n%s%s", alive, s, log)
				}
			case "prevented":
				if strings.Contains(s, "ended=0") == false || alive < 10 {
					t.Errorf("the server did not keep running (%d rounds):\n%s%s", alive, s, log)
				}
				// Its last round, before the directory goes.
				for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					if log, _ := os.ReadFile(filepath.Join(top, "server.log")); strings.Contains(string(log), "alive 40\n") {
						break
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
