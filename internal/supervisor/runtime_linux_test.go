//go:build linux && (amd64 || arm64)

package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	// tiocsti PTS: push "y\n" into the terminal's input.
	helpers["tiocsti"] = func(args []string) int {
		fd, err := unix.Open(args[0], unix.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			fmt.Println("open:", err)
			return 1
		}
		for _, c := range []byte("y\n") {
			if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c))); errno != 0 {
				fmt.Println("tiocsti:", errno)
				return 1
			}
		}
		fmt.Println("tiocsti: typed")
		return 0
	}
	// connect PATH: connect to a Unix socket.
	helpers["connect"] = func(args []string) int {
		c, err := net.Dial("unix", args[0])
		if err != nil {
			fmt.Println("connect:", err)
			return 1
		}
		c.Close()
		fmt.Println("connect: connected")
		return 0
	}
	// setxattr PATH: set user.canary on a file.
	helpers["setxattr"] = func(args []string) int {
		if err := unix.Setxattr(args[0], "user.canary", []byte("x"), 0); err != nil {
			fmt.Println("setxattr:", err)
			return 1
		}
		fmt.Println("setxattr: set")
		return 0
	}
	// memfd-exec PROGRAM ARGS: copy PROGRAM into a memfd and run it by
	// its /proc/self/fd path.
	helpers["memfd-exec"] = func(args []string) int {
		fd, err := unix.MemfdCreate("prog", 0)
		if err == nil {
			var data []byte
			if data, err = os.ReadFile(args[0]); err == nil {
				_, err = unix.Write(fd, data)
			}
		}
		if err == nil {
			err = unix.Exec(fmt.Sprintf("/proc/self/fd/%d", fd), args, os.Environ())
		}
		fmt.Println("memfd-exec:", err)
		return 1
	}
	// io_uring: set up a ring.
	helpers["io_uring"] = func([]string) int {
		params := make([]byte, 120)
		_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
		fmt.Println("io_uring:", errno)
		return 0
	}
}

// runSelf runs the test binary's helper under the supervisor and returns
// what it printed.
func runSelf(t *testing.T, cfg Config, args ...string) (Status, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, _ := os.Pipe()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { out.ReadFrom(outR); close(done) }()
	var report bytes.Buffer
	cfg.Path, cfg.Argv, cfg.Env = self, append([]string{"supervisor.test"}, args...), os.Environ()
	cfg.Stdout, cfg.Stderr, cfg.Report = outW, outW, &report
	if cfg.Decide == nil {
		cfg.Decide = (&recorder{}).decide
	}
	st, err := Run(context.Background(), cfg)
	outW.Close()
	<-done
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return st, out.String() + report.String()
}

// strict refuses what the recorder's deny list names, and any execution
// that loads code through the environment.
func (r *recorder) strict(x Exec) Verdict {
	if len(x.Env) > 0 {
		return Verdict{Reason: "loads code: " + strings.Join(x.Env, " ")}
	}
	return r.decide(x)
}

// The program is known as the caller sees it: its descriptors and
// /proc/self, a dynamic loader's program, a copy or hard link of a
// restricted program; code loaded through the environment is shown to the
// decider; a memfd cannot be run.
func TestRunExecIdentity(t *testing.T) {
	needKernel(t)
	touch := "/usr/bin/touch"
	if _, err := os.Stat(touch); err != nil {
		skipLacking(t, "no %s to refuse", touch)
	}
	loaders, _ := filepath.Glob("/lib*/ld-linux*.so*")
	tests := []struct {
		name, script string
	}{
		{"proc-self-fd", `exec 3<` + touch + `; /proc/self/fd/3 denied`},
		{"dev-fd", `exec 4<` + touch + `; /dev/fd/4 denied`},
		{"proc-pid-fd", `exec 5<` + touch + `; /proc/$$/fd/5 denied`},
		{"proc-self-cwd", `cd /usr/bin && /proc/self/cwd/touch "$OLDPWD/denied"`},
		{"copy", `cp ` + touch + ` ./t3; ./t3 denied`},
		{"hard-link", `ln ` + touch + ` ./t4 2>/dev/null || cp ` + touch + ` ./t4; ./t4 denied`},
		{"renamed-link", `ln -s ` + touch + ` ./t5; (exec -a cp ./t5 denied)`},
		{"preload", `LD_PRELOAD=/nonexistent.so /bin/true; touch -h 2>/dev/null; LD_PRELOAD=/nonexistent.so ` + touch + ` denied`},
		{"library-path", `LD_LIBRARY_PATH=. ` + touch + ` denied`},
		{"interpreter-copy", `cp ` + touch + ` ./tt; printf '#!%s/tt\n' "$PWD" > s; chmod +x s; ./s denied`},
		{"interpreter-link", `ln -s ` + touch + ` ./tl; printf '#!%s/tl\n' "$PWD" > s; chmod +x s; ./s denied`},
	}
	for _, l := range loaders {
		tests = append(tests,
			struct{ name, script string }{"loader-" + filepath.Base(l), l + " " + touch + " denied"},
			struct{ name, script string }{"loader-opts-" + filepath.Base(l), l + " --argv0 x --inhibit-cache " + touch + " denied"},
			struct{ name, script string }{"loader-copy-" + filepath.Base(l), "cp " + l + " ./myld; ./myld /bin/true && ./myld " + touch + " denied"},
			struct{ name, script string }{"loader-preload-" + filepath.Base(l), l + " --preload /nonexistent.so /bin/true && echo ran > denied"},
			struct{ name, script string }{"loader-interpreter-" + filepath.Base(l), "printf '#!" + l + " " + touch + "\\n' > s; chmod +x s; ./s denied"},
			struct{ name, script string }{"loader-interpreter-preload-" + filepath.Base(l), "printf '#!" + l + " --preload=/nonexistent.so\\n' > s; chmod +x s; ./s /bin/true && echo ran > denied"},
		)
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.script] {
			t.Fatalf("duplicate input %q", tc.script)
		}
		seen[tc.script] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Logf("input: %q", tc.script)
			dir := t.TempDir()
			r := &recorder{deny: map[string]bool{"touch": true}}
			_, stdout, out := runScriptWith(t, dir, Config{Decide: r.strict, Programs: []string{"touch", "git"}}, tc.script+"; echo done")
			if _, err := os.Stat(filepath.Join(dir, "denied")); err == nil {
				t.Errorf("the denied program ran:\n%s", out)
			}
			if !strings.Contains(out, "denied at run time") || !strings.Contains(stdout, "done") {
				t.Errorf("stdout %q, no refusal reported:\n%s", stdout, out)
			}
		})
	}
	t.Run("memfd", func(t *testing.T) {
		st, out := runSelf(t, Config{}, "memfd-exec", "/bin/true")
		if st.Code != 1 || !strings.Contains(out, "memfd-exec: operation not permitted") || !strings.Contains(out, "not a file of the file system") {
			t.Errorf("status %+v:\n%s", st, out)
		}
	})
}

// What the tree runs that names no restricted program runs, copies and
// loaders included.
func TestRunExecIdentityAllows(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	loaders, _ := filepath.Glob("/lib*/ld-linux*.so*")
	script := `exec 3</bin/true; /proc/self/fd/3 && cp /bin/echo ./e && ./e one && LD_PRELOAD= /bin/true && echo two`
	if len(loaders) > 0 {
		script += " && " + loaders[0] + " /bin/echo three"
	}
	r := &recorder{deny: map[string]bool{"touch": true}}
	st, stdout, out := runScriptWith(t, dir, Config{Decide: r.strict, Programs: []string{"touch"}}, script)
	if st.Code != 0 || !strings.Contains(stdout, "one\ntwo\n") || strings.Contains(out, "denied") {
		t.Errorf("status %+v, stdout %q\n%s", st, stdout, out)
	}
}

// runScriptWith runs a bash script in dir under the supervisor with cfg's
// decider, programs and confinement.
func runScriptWith(t *testing.T, dir string, cfg Config, script string) (Status, string, string) {
	t.Helper()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	var stdout, stderr bytes.Buffer
	var wg sync.WaitGroup
	wg.Go(func() { stdout.ReadFrom(outR) })
	wg.Go(func() { stderr.ReadFrom(errR) })
	var report bytes.Buffer
	cfg.Path, cfg.Argv, cfg.Dir = "/bin/bash", []string{"bash", "-c", script}, dir
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	cfg.Stdout, cfg.Stderr, cfg.Report = outW, errW, &report
	st, err := Run(context.Background(), cfg)
	outW.Close()
	errW.Close()
	wg.Wait()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return st, stdout.String(), report.String() + stderr.String()
}

// Nothing in the tree types into a terminal: TIOCSTI fails with EPERM and
// the terminal's input stays empty.
func TestRunTIOCSTI(t *testing.T) {
	needKernel(t)
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("opening a pty: %v", err)
	}
	defer unix.Close(master)
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts := fmt.Sprintf("/dev/pts/%d", n)
	for _, confine := range []bool{false, true} {
		st, out := runSelf(t, Config{Confine: confine, Writable: []string{"/dev/pts"}}, "tiocsti", pts)
		if st.Code != 1 || !strings.Contains(out, "tiocsti: operation not permitted") {
			t.Errorf("confine %v: status %+v:\n%s", confine, st, out)
		}
	}
	// The slave's input, as the master would see it echoed: nothing.
	buf := make([]byte, 64)
	if n, err := unix.Read(master, buf); n > 0 {
		t.Errorf("the terminal got %q (%v)", buf[:n], err)
	}
	st, out := runSelf(t, Config{}, "io_uring")
	if st.Code != 0 || !strings.Contains(out, "io_uring: operation not permitted") {
		t.Errorf("io_uring: status %+v:\n%s", st, out)
	}
}

// The tree cannot connect to the control socket of a server outside it
// (here a tmux-like one the test listens on), however it names it; other
// sockets work.
func TestRunControlSockets(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	sockDir := filepath.Join(dir, "tmux-1000")
	if err := os.Mkdir(sockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	listen := func(p string) {
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	tmux, other := filepath.Join(sockDir, "default"), filepath.Join(dir, "other.sock")
	listen(tmux)
	listen(other)
	link := filepath.Join(dir, "innocent")
	if err := os.Symlink(tmux, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string
	}{
		{tmux, "connect: dial unix " + tmux + ": connect: operation not permitted"},
		{link, "operation not permitted"},
		{"/proc/self/cwd/tmux-1000/default", "operation not permitted"},
		{other, "connect: connected"},
		// Missing: failed as the kernel would, never let go on to find
		// a link made meanwhile.
		{filepath.Join(dir, "missing.sock"), "connect: no such file or directory"},
		{filepath.Join(dir, "other.sock", "x"), "connect: not a directory"},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.path)
		self, _ := os.Executable()
		st, stdout, out := runScriptWith(t, dir, Config{Decide: (&recorder{}).decide}, self+" connect "+tc.path)
		if !strings.Contains(stdout, tc.want) {
			t.Errorf("%s: status %+v:\n%s", tc.path, st, out)
		}
	}
	// A server named by the environment, wherever its socket lies.
	custom := filepath.Join(dir, "custom.sock")
	listen(custom)
	for _, kv := range []string{"TMUX=" + custom + ",4242,0", "DOCKER_HOST=unix://" + custom, "DBUS_SESSION_BUS_ADDRESS=unix:path=" + custom + ",guid=x"} {
		t.Logf("input: %q", kv)
		self, _ := os.Executable()
		st, stdout, out := runScriptWith(t, dir, Config{Decide: (&recorder{}).decide, Env: append(os.Environ(), kv)}, self+" connect "+custom)
		if st.Code != 1 || !strings.Contains(stdout, "operation not permitted") {
			t.Errorf("%s: status %+v, stdout %q\n%s", kv, st, stdout, out)
		}
	}
	// tmux itself, found on the tree's PATH, may: its execution was
	// decided. A tmux of the tree's own is not the one on PATH.
	self, _ := os.Executable()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "tmux")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	st, stdout, out := runScriptWith(t, dir, Config{Decide: (&recorder{}).decide, Env: env}, "tmux connect "+tmux)
	if st.Code != 0 || !strings.Contains(stdout, "connect: connected") {
		t.Errorf("tmux itself: status %+v, stdout %q\n%s", st, stdout, out)
	}
	st, stdout, out = runScriptWith(t, dir, Config{Decide: (&recorder{}).decide}, "cp "+self+" ./tmux && ./tmux connect "+tmux)
	if st.Code != 1 || !strings.Contains(stdout, "operation not permitted") {
		t.Errorf("a tmux of the tree's: status %+v, stdout %q\n%s", st, stdout, out)
	}
}

// Metadata outside the writable directories cannot change, however the
// file is named; inside it can.
func TestRunMetadata(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	in, outside := filepath.Join(dir, "in"), filepath.Join(dir, "outside")
	for _, d := range []string{in, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	canary := filepath.Join(outside, "canary")
	if err := os.WriteFile(canary, []byte("c"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(canary)
	self, _ := os.Executable()
	script := `cd in; touch mine && chmod 666 mine && touch -d 2001-01-01 mine && echo inside-ok
chmod 666 ` + canary + `; echo "chmod=$?"
ln -s ` + canary + ` link; chmod 666 link; echo "link=$?"
exec 3<` + canary + `; chmod 666 /proc/self/fd/3; echo "fd=$?"
touch -d 2001-01-01 ` + canary + `; echo "utimes=$?"
chown $(id -u) ` + canary + `; echo "chown=$?"
` + self + ` setxattr ` + canary + `
chmod 666 ../outside/missing; echo "missing=$?"
`
	st, stdout, out := runScriptWith(t, dir, Config{Decide: (&recorder{}).decide, Confine: true, Writable: []string{in}}, script)
	if st.Code != 0 || !strings.Contains(stdout, "inside-ok") {
		t.Fatalf("status %+v, stdout %q\n%s", st, stdout, out)
	}
	for _, w := range []string{"chmod=1", "link=1", "fd=1", "utimes=1", "chown=1", "setxattr: operation not permitted", "missing=1"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("no %q in stdout %q\n%s", w, stdout, out)
		}
	}
	after, _ := os.Stat(canary)
	if after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("canary changed: %v %v -> %v %v", before.Mode(), before.ModTime(), after.Mode(), after.ModTime())
	}
	if n, _ := unix.Getxattr(canary, "user.canary", make([]byte, 8)); n > 0 {
		t.Error("canary got an xattr")
	}
	if !strings.Contains(out, "fchmodat "+canary+": outside the directories the tree may write") {
		t.Errorf("refusal not reported:\n%s", out)
	}
	if fi, err := os.Stat(filepath.Join(in, "mine")); err != nil || fi.Mode().Perm() != 0o666 {
		t.Errorf("inside: %v %v", fi, err)
	}
}

// Files move across directories inside the writable tree, at every level:
// confined (within one writable directory and between two), and not
// confined (Landlock still handles REFER).
func TestRunRenames(t *testing.T) {
	needKernel(t)
	if landlockABI() < 2 {
		skipLacking(t, "Landlock ABI %d (before 2) refuses every rename across directories", landlockABI())
	}
	for _, confine := range []bool{false, true} {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		script := `mkdir -p a/sub b && echo x > a/f && mv a/f a/sub/f && mv a/sub/f b/f && mv b/f a/f2 && mv a/sub b/sub && ln a/f2 b/h && echo moved`
		if err := os.MkdirAll(a, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(b, 0o755); err != nil {
			t.Fatal(err)
		}
		st, stdout, out := runScriptWith(t, dir, Config{Decide: (&recorder{}).decide, Confine: confine, Writable: []string{a, b, a}}, script) // a twice: one rule
		if st.Code != 0 || stdout != "moved\n" {
			t.Errorf("confine %v: status %+v, stdout %q\n%s", confine, st, stdout, out)
		}
	}
}

func init() {
	// race-exec FILE: execute /bin/echo status from a buffer whose
	// address it writes to FILE first, for the decider to change.
	helpers["race-exec"] = func(args []string) int {
		buf := []byte("/bin/echo\x00status\x00")
		addr := uintptr(unsafe.Pointer(&buf[0]))
		if err := os.WriteFile(args[0], []byte(fmt.Sprint(addr)), 0o600); err != nil {
			fmt.Println(err)
			return 1
		}
		argv := []uintptr{addr, addr + 10, 0}
		envv := []uintptr{0}
		_, _, errno := unix.RawSyscall(unix.SYS_EXECVE, addr, uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
		fmt.Println("race-exec:", errno)
		return 1
	}
}

// The argv race, won every time: the decider itself rewrites the
// process's argv after reading it (as a racing thread would), and the
// execution is refused because what the kernel would run is not what
// was decided.
func TestRunArgvChanged(t *testing.T) {
	needKernel(t)
	addrFile := filepath.Join(t.TempDir(), "addr")
	decide := func(x Exec) Verdict {
		if len(x.Argv) == 2 && x.Argv[1] == "pushed" {
			// An execve interrupted by a signal starts again: decided
			// again, on what its memory holds then.
			return Verdict{Reason: "denied by the test"}
		}
		if len(x.Argv) == 2 && x.Argv[1] == "status" {
			data, err := os.ReadFile(addrFile)
			var addr int64
			if err == nil {
				_, err = fmt.Sscan(string(data), &addr)
			}
			if err == nil {
				var f *os.File
				if f, err = os.OpenFile(fmt.Sprintf("/proc/%d/mem", x.Pid), os.O_RDWR, 0); err == nil {
					_, err = f.WriteAt([]byte("pushed"), addr+10)
					f.Close()
				}
			}
			if err != nil {
				return Verdict{Reason: "the test could not race: " + err.Error()}
			}
		}
		return Verdict{Allow: true}
	}
	// No preemption signal interrupts the helper's execve: the second
	// reading is what refuses it.
	t.Setenv("GODEBUG", "asyncpreemptoff=1")
	st, out := runSelf(t, Config{Decide: decide}, "race-exec", addrFile)
	if st.Code != 1 || !strings.Contains(out, "race-exec: operation not permitted") || !strings.Contains(out, "changed while it was decided") ||
		strings.Contains(out, "pushed\n") {
		t.Errorf("status %+v:\n%s", st, out)
	}
}

// cpuTime is the CPU time the calling process (who: RUSAGE_SELF) or its
// waited-for children (RUSAGE_CHILDREN) used, in µs.
func cpuTime(who int) float64 {
	var ru unix.Rusage
	unix.Getrusage(who, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
}

// BenchmarkSupervisorCPU is the supervisor's own CPU per execution (µs,
// the test process's time, which the tree's is not part of): 300
// executions of /bin/true from one bash, every one decided, writes
// confined, copies of restricted programs looked for. Target: ≤ 300 µs.
// On a loaded machine CPU times swell; plain-µs-cpu/exec, the whole CPU
// of one plain bash loop's exec measured alongside, is the yardstick.
func BenchmarkSupervisorCPU(b *testing.B) {
	needKernel(b)
	const n = 300
	script := fmt.Sprintf("for ((i = 0; i < %d; i++)); do /bin/true; done", n)
	var total, plain float64
	for b.Loop() {
		before := cpuTime(unix.RUSAGE_CHILDREN)
		if err := exec.Command("/bin/bash", "-c", script).Run(); err != nil {
			b.Fatal(err)
		}
		plain += cpuTime(unix.RUSAGE_CHILDREN) - before
		r := &recorder{}
		before = cpuTime(unix.RUSAGE_SELF)
		st, err := Run(context.Background(), Config{
			Path: "/bin/bash", Argv: []string{"bash", "-c", script}, Env: os.Environ(),
			Confine: true, Writable: []string{b.TempDir()}, Decide: r.decide,
			Programs: []string{"git", "curl", "rm", "touch"},
		})
		total += cpuTime(unix.RUSAGE_SELF) - before
		if err != nil || st.ExitCode() != 0 || len(st.Refused) > 0 {
			b.Fatal(st, err)
		}
	}
	b.ReportMetric(total/float64(b.N*n), "µs-cpu/exec")
	b.ReportMetric(plain/float64(b.N*n), "plain-µs-cpu/exec")
}

// A program that cannot start says why and ends 126, as exec would.
func TestRunCannotStart(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	tests := []struct {
		path, dir, want string
	}{
		{filepath.Join(dir, "missing"), "", "no such file or directory"},
		{"/bin/true", filepath.Join(dir, "no-dir"), "no such file or directory"},
		{dir, "", "permission denied"},
	}
	for _, tc := range tests {
		t.Logf("input: %q in %q", tc.path, tc.dir)
		errR, errW, _ := os.Pipe()
		var stderr bytes.Buffer
		done := make(chan struct{})
		go func() { stderr.ReadFrom(errR); close(done) }()
		st, err := Run(context.Background(), Config{Path: tc.path, Argv: []string{"x"}, Dir: tc.dir, Env: os.Environ(),
			Stderr: errW, Decide: (&recorder{}).decide})
		errW.Close()
		<-done
		if err != nil || st.Code != 126 || !strings.Contains(stderr.String(), "running "+tc.path+": "+tc.want) {
			t.Errorf("%s: status %+v, err %v, stderr %q", tc.path, st, err, stderr.String())
		}
	}
}
