//go:build linux && (amd64 || arm64)

package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func init() {
	// unprivileged: Run a script as whoever runs this, and print what
	// the decider saw.
	helpers["unprivileged"] = func(args []string) int {
		r := &recorder{deny: map[string]bool{"touch": true}}
		st, err := Run(context.Background(), Config{
			Path: "/bin/bash", Argv: []string{"bash", "-c", args[0]}, Env: []string{"PATH=/usr/bin:/bin"},
			Dir: "/", Stdout: os.Stdout, Stderr: os.Stderr, Decide: r.decide, Report: os.Stderr,
		})
		if err != nil {
			fmt.Println("Run:", err)
			return 1
		}
		fmt.Printf("uid=%d status=%+v\n", os.Getuid(), st)
		for _, x := range r.seen {
			fmt.Printf("exec %s %q\n", x.Path, x.Argv)
		}
		return 0
	}
}

// The program Run starts is decided at its own execve, which Run's
// spawned child makes in the supervisor's memory: not dumpable, so not
// readable by a supervisor without CAP_SYS_PTRACE. Run as an ordinary
// user, the start is decided from what Run was given (argv exactly),
// and what the program runs next is read and decided as always.
func TestRunUnprivileged(t *testing.T) {
	needKernel(t)
	bin := os.Args[0]
	if os.Getuid() == 0 {
		// A copy of this binary that nobody may run (go test's is in
		// a directory only root may enter).
		dir, err := os.MkdirTemp("", "unprivileged")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		bin = filepath.Join(dir, "supervisor.test")
		b, err := os.ReadFile(os.Args[0])
		if err == nil {
			err = os.WriteFile(bin, b, 0o755)
		}
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "unprivileged", `/bin/true "a b"; touch /tmp/never-made-$$; echo "touch=$?"`)
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{
		"uid=", "status={Code:0 Signal:0}", "touch=126",
		`exec /bin/bash ["bash" "-c" "/bin/true \"a b\"; touch`,
		`exec /bin/true ["/bin/true" "a b"]`,
		"agent-shim: denied at run time: ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if os.Getuid() == 0 && strings.Contains(s, "uid=0 ") {
		t.Errorf("ran as root:\n%s", s)
	}
}

// A start the decider refuses fails like any refused execution (126,
// reported), and the supervisor is left as it was.
func TestRunStartRefused(t *testing.T) {
	needKernel(t)
	r := &recorder{deny: map[string]bool{"bash": true}}
	st, _, out := runScript(t, t.TempDir(), r, true, nil, "exit 0")
	if st.Code != 126 || !strings.Contains(out, "agent-shim: denied at run time: ") {
		t.Errorf("status %+v\n%s", st, out)
	}
	if len(r.seen) != 1 || r.seen[0].Path != "/bin/bash" {
		t.Errorf("saw %+v", r.seen)
	}
}

// The start shares the supervisor's memory until its execve, which waits
// for the loop; nothing of the runtime may wait for the start meanwhile.
// Stop-the-world collections all along, and a single P, do not stall it
// (a vfork would: its thread keeps its P until the execve).
func TestRunStartUnderCollections(t *testing.T) {
	needKernel(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	for range 20 {
		st, _, out := runScript(t, t.TempDir(), &recorder{}, true, nil, "/bin/true")
		if st.Code != 0 {
			t.Fatalf("status %+v\n%s", st, out)
		}
	}
	close(stop)
	<-done
}
