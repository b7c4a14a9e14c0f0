//go:build linux && (amd64 || arm64)

package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
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
		"uid=", "status={Code:0 Signal:0 ", "touch=126",
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

func init() {
	// start-state DIR: open a descriptor this process did not inherit
	// (not close-on-exec), then run a script under the supervisor in DIR
	// that shows what the program got: its soft RLIMIT_NOFILE, the
	// signals it ignores, its descriptors.
	helpers["start-state"] = func(args []string) int {
		fd, err := unix.Open(os.DevNull, unix.O_RDONLY, 0)
		if err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Printf("not inherited: %d\n", fd)
		st, err := Run(context.Background(), Config{
			Path: "/bin/bash", Argv: []string{"bash", "-c", `echo "nofile $(ulimit -Sn)"; grep ^SigIgn /proc/self/status; ls /proc/$$/fd > fds; echo "fds $(sort -n fds | tr '\n' ' ')"`},
			Env: os.Environ(), Dir: args[0], Stdout: os.Stdout, Stderr: os.Stderr, Report: os.Stderr,
			Decide: func(Exec) Verdict { return Verdict{Allow: true} },
		})
		fmt.Printf("status {%d %d} %v\n", st.Code, st.Signal, err)
		return 0
	}
	// no-close-range: run /bin/true where close_range fails (ENOSYS,
	// as in a container whose filter does not know it).
	helpers["no-close-range"] = func(args []string) int {
		insns, err := assemble([]insn{
			{code: bpfLdAbs, k: offNr},
			{code: bpfJeq, k: unix.SYS_CLOSE_RANGE, jt: "enosys"},
			{code: bpfRet, k: unix.SECCOMP_RET_ALLOW},
			{label: "enosys", code: bpfRet, k: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		})
		if err == nil {
			err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		}
		if err == nil {
			prog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}
			if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); errno != 0 {
				err = errno
			}
		}
		if err != nil {
			fmt.Println("filter:", err)
			return 1
		}
		st, err := Run(context.Background(), Config{
			Path: "/bin/true", Argv: []string{"true"}, Env: os.Environ(), Stdout: os.Stdout, Stderr: os.Stdout,
			Decide: func(Exec) Verdict { return Verdict{Allow: true} },
		})
		fmt.Printf("status {%d %d} %v\n", st.Code, st.Signal, err)
		return 0
	}
}

// The program starts as the person's shell would start it: with the soft
// RLIMIT_NOFILE this process started with (package syscall raised it),
// the signals this process started ignoring still ignored (nohup's
// SIGHUP, a background job's SIGINT; signal.Notify would stop ignoring
// them), and the descriptors this process inherited; not one it opened
// itself.
func TestRunStartState(t *testing.T) {
	needKernel(t)
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		skipLacking(t, "no nohup: %v", err)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Max < 1024 {
		skipLacking(t, "hard RLIMIT_NOFILE %d (%v): too low to lower the soft one", lim.Max, err)
	}
	self, _ := os.Executable()
	cmd := exec.Command("/bin/bash", "-c", `ulimit -Sn 256; trap "" INT; exec 7</dev/null; exec "$0" "$1" start-state "$2"`, nohup, self, t.TempDir())
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	if !strings.Contains(s, "nofile 256\n") {
		t.Errorf("RLIMIT_NOFILE is not the one the process started with (256):\n%s", s)
	}
	var ign uint64
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			ign, _ = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if ign&3 != 3 {
		t.Errorf("SIGHUP and SIGINT not ignored (SigIgn %#x):\n%s", ign, s)
	}
	var mine string
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, "not inherited: "); ok {
			mine = v
		}
	}
	fds := ""
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, "fds "); ok {
			fds = " " + v
		}
	}
	if !strings.Contains(fds, " 7 ") || mine == "" || strings.Contains(fds, " "+mine+" ") || !strings.Contains(s, "status {0 0} <nil>") {
		t.Errorf("want descriptor 7 inherited and %q not:\n%s", mine, s)
	}
}

// Where the descriptors the program must not get cannot be closed at its
// execve (close_range fails), it does not start.
func TestRunStartCloseRangeFails(t *testing.T) {
	needKernel(t)
	self, _ := os.Executable()
	out, err := exec.Command(self, "no-close-range").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s := string(out); !strings.Contains(s, "status {126 0} <nil>") ||
		!strings.Contains(s, "keeping this process's descriptors from it: function not implemented") {
		t.Errorf("the program started, or no reason:\n%s", s)
	}
}

// seccompThreads lists this process's threads that have a seccomp
// filter: the restricted thread, while it lasts.
func seccompThreads(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err == nil && strings.Contains(string(b), "\nSeccomp:\t2\n") {
			out = append(out, task.Name())
		}
	}
	return out
}

// No thread of the supervisor is ever restricted or in the tree's domain
// (the program's process restricts itself): none holds the tree's filter
// when the start is decided, nor after, whatever the scheduler does. A
// thread in the domain, sharing this process's memory, would let a
// process of the tree write it (the restricted thread of old could still
// be alive when the program started).
func TestRunNoRestrictedThread(t *testing.T) {
	needKernel(t)
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for range 20 {
				var alive []string
				first := true
				st, err := Run(context.Background(), Config{
					Path: "/bin/true", Argv: []string{"true"}, Env: os.Environ(),
					Decide: func(Exec) Verdict {
						if first {
							alive, first = seccompThreads(t), false
						}
						return Verdict{Allow: true}
					},
				})
				if err != nil || st.Code != 0 {
					t.Fatalf("status %+v, err %v", st, err)
				}
				if len(alive) > 0 {
					t.Fatalf("GOMAXPROCS %d: threads %v held the tree's filter when the start was decided", procs, alive)
				}
			}
		}()
	}
	if left := seccompThreads(t); len(left) > 0 {
		t.Errorf("threads %v keep the tree's filter", left)
	}
}
