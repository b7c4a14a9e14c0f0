//go:build linux && (amd64 || arm64)

package supervisor

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/agent-shim/agent-shim/internal/supervisor/inherited"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// layerRequired says that the run-time layer must run here (CI sets
// AGENT_SHIM_TEST_LAYER=required): a test that would skip for want of a
// kernel feature fails instead. It only makes tests stricter.
var layerRequired = os.Getenv("AGENT_SHIM_TEST_LAYER") == "required"

func needKernel(t testing.TB) {
	t.Helper()
	if ok, why := Available(); !ok {
		skipLacking(t, "the kernel lacks the run-time layer: %s", why)
	}
}

// skipLacking skips a test for want of what the kernel or the machine
// lacks, saying what; where the layer is required, it fails instead.
func skipLacking(t testing.TB, format string, args ...any) {
	t.Helper()
	if layerRequired {
		t.Fatalf("AGENT_SHIM_TEST_LAYER=required, but "+format, args...)
	}
	t.Skipf(format, args...)
}

// recorder decides by a list of denied program basenames and records
// every execution.
type recorder struct {
	mu   sync.Mutex
	seen []Exec
	deny map[string]bool
}

func (r *recorder) decide(x Exec) Verdict {
	r.mu.Lock()
	r.seen = append(r.seen, x)
	r.mu.Unlock()
	for _, s := range x.Spellings() {
		if r.deny[filepath.Base(s[0])] {
			return Verdict{Reason: "denied by the test"}
		}
	}
	return Verdict{Allow: true}
}

// run runs a bash script under the supervisor in dir.
func runScript(t *testing.T, dir string, r *recorder, confine bool, writable []string, script string) (Status, string, string) {
	t.Helper()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	var stdout, stderr bytes.Buffer
	var wg sync.WaitGroup
	wg.Go(func() { stdout.ReadFrom(outR) })
	wg.Go(func() { stderr.ReadFrom(errR) })
	var report bytes.Buffer
	st, err := Run(context.Background(), Config{
		Path: "/bin/bash", Argv: []string{"bash", "-c", script}, Env: os.Environ(), Dir: dir,
		Stdout: outW, Stderr: errW, Confine: confine, Writable: writable,
		Decide: r.decide, Report: &report,
	})
	outW.Close()
	errW.Close()
	wg.Wait()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return st, stdout.String(), report.String() + stderr.String()
}

// What the supervisor reads of an execution is what the program gets:
// the path made absolute, the argv exactly, the working directory.
func TestRunReadsExecs(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "s.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	long := strings.Repeat("x", 5000) // across pages
	st, _, out := runScript(t, dir, r, false, nil, `cd sub && /bin/true "a b" '' "`+long+`" && ./s.sh q && exec -a other /bin/true z`)
	if st.ExitCode() != 0 || st.Prevented || st.Ended != 0 || len(st.Refused) > 0 {
		t.Fatalf("status %+v\n%s", st, out)
	}
	sub := filepath.Join(dir, "sub")
	if real, err := filepath.EvalSymlinks(sub); err == nil {
		sub = real
	}
	want := []Exec{
		{Path: "/bin/bash", Argv: []string{"bash", "-c"}},
		{Path: "/bin/true", Argv: []string{"/bin/true", "a b", "", long}, Dir: sub},
		{Path: filepath.Join(sub, "s.sh"), Argv: []string{"./s.sh", "q"}, Dir: sub, Interp: []string{"/bin/sh"}},
		{Path: "/bin/true", Argv: []string{"other", "z"}, Dir: sub},
	}
	if len(r.seen) != len(want) {
		t.Fatalf("saw %d executions, want %d: %+v", len(r.seen), len(want), r.seen)
	}
	for i, w := range want {
		g := r.seen[i]
		if g.Path != w.Path || (w.Dir != "" && g.Dir != w.Dir) || g.Pid <= 0 ||
			!strings.HasPrefix(strings.Join(g.Argv, "\x00"), strings.Join(w.Argv, "\x00")) ||
			strings.Join(g.Interp, " ") != strings.Join(w.Interp, " ") {
			t.Errorf("exec %d: got %+v\nwant %+v", i, g, w)
		}
		var st unix.Stat_t
		if err := unix.Stat(g.Real, &st); err != nil || g.ID != (FileID{Dev: uint64(st.Dev), Ino: st.Ino}) {
			t.Errorf("exec %d: ID %+v is not the file %s (%v)", i, g.ID, g.Real, err)
		}
	}
}

// A refused execution fails with EPERM, the refusal is reported in one
// line, and the script goes on.
func TestRunRefuses(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	r := &recorder{deny: map[string]bool{"touch": true}}
	st, stdout, out := runScript(t, dir, r, false, nil, `touch a; echo "status=$?"; ln -s "$(command -v touch)" t2; ./t2 b; (exec -a ok touch c); echo done`)
	if st.Code != 0 || !strings.Contains(stdout, "status=126") || !strings.Contains(stdout, "done") {
		t.Errorf("status %+v, stdout %q\n%s", st, stdout, out)
	}
	for _, f := range []string{"a", "b", "c"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was made", f)
		}
	}
	if n := strings.Count(out, "agent-shim: denied at run time: "); n != 3 {
		t.Errorf("%d refusals reported, want 3:\n%s", n, out)
	}
	if !strings.Contains(out, "Operation not permitted") {
		t.Errorf("no EPERM:\n%s", out)
	}
}

// Without a decider, nothing runs: fail closed.
func TestRunNilDecideRefuses(t *testing.T) {
	needKernel(t)
	var report bytes.Buffer
	st, err := Run(context.Background(), Config{Path: "/bin/true", Argv: []string{"true"}, Env: os.Environ(), Report: &report})
	if err != nil || st.Code != 126 || !strings.Contains(report.String(), "nothing decides") {
		t.Errorf("status %+v, err %v, report %q", st, err, report.String())
	}
}

// Writes land only where Writable says, and /dev/null always works.
func TestRunConfinesWrites(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	file := filepath.Join(dir, "one-file")
	for _, d := range []string{in, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	script := `echo x > in/a && mkdir in/d && echo y > in/d/b && rm in/a && echo z > one-file && echo n > /dev/null && echo ok;
echo x > out/a; mkdir out/d; ln -s x out/l; mv in/d out/d2; : > one-file.2; echo end`
	st, stdout, errs := runScript(t, dir, r, true, []string{in, file, "/dev/null", filepath.Join(dir, "missing")}, script)
	if st.Code != 0 || !strings.Contains(stdout, "ok") || !strings.Contains(stdout, "end") {
		t.Fatalf("status %+v, stdout %q\n%s", st, stdout, errs)
	}
	for _, p := range []string{"out/a", "out/d", "out/l", "out/d2", "one-file.2"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was made", p)
		}
	}
	if n := strings.Count(errs, "Permission denied"); n < 4 {
		t.Errorf("%d EACCES, want at least 4:\n%s", n, errs)
	}
	if data, _ := os.ReadFile(file); string(data) != "z\n" {
		t.Errorf("one-file = %q", data)
	}
}

// Exit codes and signals are reported as they happened.
func TestRunStatus(t *testing.T) {
	needKernel(t)
	r := &recorder{}
	for _, tc := range []struct {
		script string
		want   Status
	}{
		{"exit 7", Status{Code: 7}},
		{"kill -TERM $$", Status{Signal: 15}},
		{"kill -KILL $$", Status{Signal: 9}},
		{"exec /bin/false", Status{Code: 1}},
	} {
		st, _, out := runScript(t, t.TempDir(), r, true, nil, tc.script)
		if !reflect.DeepEqual(st, tc.want) {
			t.Errorf("%q: %+v, want %+v\n%s", tc.script, st, tc.want, out)
		}
	}
}

// A supervised tree cannot start a supervisor of its own: the filter
// refuses a second listener, and the nested Run reports the layer
// unavailable (its caller then runs without it, still under this one).
func TestRunNested(t *testing.T) {
	needKernel(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	outR, outW, _ := os.Pipe()
	var stdout bytes.Buffer
	done := make(chan struct{})
	go func() { stdout.ReadFrom(outR); close(done) }()
	st, err := Run(context.Background(), Config{
		Path: self, Argv: []string{"supervisor.test", "nested-run"}, Env: os.Environ(),
		Stdout: outW, Stderr: outW, Decide: r.decide,
	})
	outW.Close()
	<-done
	if err != nil || st.Code != 3 || !strings.Contains(stdout.String(), ErrUnavailable.Error()) ||
		!strings.Contains(stdout.String(), "operation not permitted") {
		t.Errorf("status %+v, err %v, output %q", st, err, stdout.String())
	}
}

// Many executions at once (each its own decision) are all answered.
func TestRunManyExecs(t *testing.T) {
	needKernel(t)
	r := &recorder{deny: map[string]bool{"touch": true}}
	dir := t.TempDir()
	st, _, out := runScript(t, dir, r, false, nil, `for i in $(seq 300); do /bin/true $i & done; touch x & wait; echo done`)
	if st.Code != 0 {
		t.Errorf("status %+v\n%s", st, out)
	}
	if len(r.seen) < 302 {
		t.Errorf("saw %d executions, want 302", len(r.seen))
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("the denied command ran")
	}
}

// The filter assembles, and its jumps land where they should.
func TestFilterAssembles(t *testing.T) {
	insns, err := assemble(filterProgram(true))
	if err != nil {
		t.Fatal(err)
	}
	if len(insns) < 10 || insns[len(insns)-1].K != unix.SECCOMP_RET_KILL_PROCESS {
		t.Errorf("filter: %+v", insns)
	}
	if _, err := assemble([]insn{{code: bpfJeq, jt: "nowhere"}}); err == nil {
		t.Error("a jump to nowhere assembled")
	}
	if _, err := assemble([]insn{{label: "back", code: bpfRet}, {code: bpfJeq, jt: "back"}}); err == nil {
		t.Error("a backward jump assembled")
	}
}

func TestInterpreter(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		content string
		want    []string
	}{
		{"#!/bin/sh\necho\n", []string{"/bin/sh"}},
		{"#! /usr/bin/env  python3 \n", []string{"/usr/bin/env", "python3"}},
		{"#!/usr/bin/env -S git push --force\n", []string{"/usr/bin/env", "-S git push --force"}},
		{"#!/bin/bash\t-e\n", []string{"/bin/bash", "-e"}},
		{"#!\n", nil},
		{"echo no\n", nil},
		{"\x7fELF", nil},
		{"", nil},
	}
	for i, tc := range tests {
		t.Logf("input: %q", tc.content)
		p := filepath.Join(dir, "s"+string(rune('a'+i)))
		if err := os.WriteFile(p, []byte(tc.content), 0o755); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, interpreter(p)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
	if got := interpreter(dir); got != nil {
		t.Errorf("a directory: %q", got)
	}
	if got := interpreter(filepath.Join(dir, "missing")); got != nil {
		t.Errorf("a missing file: %q", got)
	}
}

// evalFilter runs a classic BPF filter over one seccomp_data, as the
// kernel would.
func evalFilter(t *testing.T, prog []unix.SockFilter, nr int32, arch uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[0:], uint32(nr))
	binary.LittleEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case bpfLdAbs:
			a = binary.LittleEndian.Uint32(data[in.K:])
		case bpfAnd:
			a &= in.K
		case bpfRsh:
			a >>= in.K
		case bpfJeq, bpfJge, bpfJset:
			var jump bool
			switch in.Code {
			case bpfJeq:
				jump = a == in.K
			case bpfJge:
				jump = a >= in.K
			case bpfJset:
				jump = a&in.K != 0
			}
			if jump {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case bpfRet:
			return in.K
		default:
			t.Fatalf("unknown opcode %#x", in.Code)
		}
	}
	t.Fatal("the filter ran off its end")
	return 0
}

// Every way into exec is watched or refused; other calls pass.
func TestFilterDecisions(t *testing.T) {
	prog, err := assemble(filterProgram(true))
	if err != nil {
		t.Fatal(err)
	}
	const (
		notify = unix.SECCOMP_RET_USER_NOTIF
		allow  = unix.SECCOMP_RET_ALLOW
		kill   = unix.SECCOMP_RET_KILL_PROCESS
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	)
	type filterCase struct {
		name string
		nr   int32
		arch uint32
		args []uint64
		want uint32
	}
	args := func(a ...uint64) []uint64 { return a }
	const (
		setflags = 0x40086602 // FS_IOC_SETFLAGS
		fssetx   = 0x401c5820 // FS_IOC_FSSETXATTR
		verity   = 0x40806685 // FS_IOC_ENABLE_VERITY
		setpol   = 0x800c6613 // FS_IOC_SET_ENCRYPTION_POLICY, an _IOR
		getflags = 0x80086601 // FS_IOC_GETFLAGS
		tcgets   = 0x5401
	)
	tests := []filterCase{
		{"execve", nrExecve, auditArch, nil, notify},
		{"execveat", nrExecveat, auditArch, nil, notify},
		{"read", 0, auditArch, nil, allow},
		{"seccomp without a listener", nrSeccomp, auditArch, args(0, unix.SECCOMP_FILTER_FLAG_TSYNC), allow},
		{"seccomp with a listener", nrSeccomp, auditArch, args(0, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|unix.SECCOMP_FILTER_FLAG_TSYNC), eperm},
		{"TIOCSTI", nrIoctl, auditArch, args(0, tiocsti), eperm},
		{"TCGETS", nrIoctl, auditArch, args(0, tcgets), allow},
		{"FS_IOC_SETFLAGS", nrIoctl, auditArch, args(3, setflags), notify},
		{"FS_IOC_SETFLAGS, high bits set", nrIoctl, auditArch, args(3, 0xffffffff00000000|setflags), notify},
		{"FS_IOC_FSSETXATTR", nrIoctl, auditArch, args(3, fssetx), notify},
		{"FS_IOC_ENABLE_VERITY", nrIoctl, auditArch, args(3, verity), notify},
		{"FS_IOC_SET_ENCRYPTION_POLICY", nrIoctl, auditArch, args(3, setpol), notify},
		{"FS_IOC_GETFLAGS", nrIoctl, auditArch, args(3, getflags), allow},
		{"mknodat of a block device", nrMknodat, auditArch, args(0, 0, sIFBLK|0o600, 0x700), eperm},
		{"mknodat of a character device", nrMknodat, auditArch, args(0, 0, sIFCHR|0o600, 0x103), eperm},
		{"mknodat of a FIFO", nrMknodat, auditArch, args(0, 0, 0o010000|0o600), allow},
		{"mknodat of a file", nrMknodat, auditArch, args(0, 0, 0o100000|0o600), allow},
		{"chroot", nrChroot, auditArch, nil, eperm},
		{"setns into any namespace", nrSetns, auditArch, args(3, 0), eperm},
		{"setns into a mount namespace", nrSetns, auditArch, args(3, unix.CLONE_NEWNS), eperm},
		{"setns into a user namespace", nrSetns, auditArch, args(3, unix.CLONE_NEWUSER), eperm},
		{"setns into a network namespace", nrSetns, auditArch, args(3, unix.CLONE_NEWNET), allow},
		{"setns into a network and a mount namespace", nrSetns, auditArch, args(3, unix.CLONE_NEWNET|unix.CLONE_NEWNS), eperm},
		{"compat execve", compatExecve, compatArch, nil, eperm},
		{"compat execveat", compatExecveat, compatArch, nil, eperm},
		{"compat seccomp with a listener", compatSeccomp, compatArch, args(0, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER), eperm},
		{"compat FS_IOC32_SETFLAGS", compatIoctl, compatArch, args(3, 0x40046602), eperm},
		{"compat TCGETS", compatIoctl, compatArch, args(0, tcgets), allow},
		{"compat read", 3, compatArch, nil, allow},
		{"another architecture", nrExecve, 0x12345678, nil, kill},
		{"a negative number", -1, auditArch, nil, allow},
	}
	if mknod := uint32(nrMknod); mknod != none {
		tests = append(tests,
			filterCase{"mknod of a block device", int32(mknod), auditArch, args(0, sIFBLK|0o600, 0x700), eperm},
			filterCase{"mknod of a FIFO", int32(mknod), auditArch, args(0, 0o010000|0o600), allow})
	}
	if x32Bit != 0 {
		tests = append(tests,
			filterCase{"x32 execve", int32(x32Bit | 520), auditArch, nil, kill},
			filterCase{"x32 read", int32(x32Bit), auditArch, nil, kill}) // read is syscall 0
	}
	for _, tc := range tests {
		if got := evalFilter(t, prog, tc.nr, tc.arch, tc.args...); got != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, got, tc.want)
		}
	}
	// Without Confine, the flags of a file are the tree's to change where
	// it may write: everywhere its user may. Device nodes stay refused.
	open, err := assemble(filterProgram(false))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []filterCase{
		{"FS_IOC_SETFLAGS", nrIoctl, auditArch, args(3, setflags), allow},
		{"TIOCSTI", nrIoctl, auditArch, args(0, tiocsti), eperm},
		{"mknodat of a block device", nrMknodat, auditArch, args(0, 0, sIFBLK|0o600, 0x700), eperm},
		{"compat FS_IOC32_SETFLAGS", compatIoctl, compatArch, args(3, 0x40046602), eperm},
	} {
		if got := evalFilter(t, open, tc.nr, tc.arch, tc.args...); got != tc.want {
			t.Errorf("not confined: %s: %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

// BenchmarkExec is one execution of /bin/true from a bash loop, plain and
// under the supervisor (every exec decided, writes confined): the
// difference is the run-time layer's cost per exec, wall clock.
func BenchmarkExec(b *testing.B) {
	needKernel(b)
	loop := func(n int) string { return "for ((i = 0; i < " + strconv.Itoa(n) + "; i++)); do /bin/true; done" }
	b.Run("plain", func(b *testing.B) {
		if err := exec.Command("/bin/bash", "-c", loop(b.N)).Run(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("supervised", func(b *testing.B) {
		r := &recorder{}
		st, err := Run(context.Background(), Config{
			Path: "/bin/bash", Argv: []string{"bash", "-c", loop(b.N)}, Env: os.Environ(),
			Confine: true, Writable: []string{b.TempDir()}, Decide: r.decide,
		})
		if err != nil || st.ExitCode() != 0 || len(st.Refused) > 0 {
			b.Fatal(st, err)
		}
	})
}

// The program gets fds 0, 1 and 2, what this process inherited open
// (as a shell would pass it on), and one thread: nothing of the
// supervisor's, nor the restricted thread's pipe.
func TestRunAddsNoFdOrThread(t *testing.T) {
	needKernel(t)
	r := &recorder{}
	dir := t.TempDir()
	st, stdout, out := runScript(t, dir, r, true, []string{dir}, `ls /proc/$$/fd > fds; sort -n fds | tr '\n' ' '; grep '^Threads:' /proc/$$/status`)
	if want := fdList(0, 1, 2) + "Threads:\t1\n"; st.Code != 0 || stdout != want {
		t.Errorf("status %+v, stdout %q, want %q\n%s", st, stdout, want, out)
	}
}

// fdList lists the descriptors std, and those this process inherited
// open, in order, as ls | tr would.
func fdList(std ...int) string {
	fds := slices.Clone(std)
	if fs, ok := inherited.Files(); ok {
		for _, f := range fs {
			fds = append(fds, f.Fd)
		}
	}
	slices.Sort(fds)
	var b strings.Builder
	for _, fd := range fds {
		fmt.Fprintf(&b, "%d ", fd)
	}
	return b.String()
}

// A decider that panics refuses the execution; the supervisor goes on.
func TestRunDeciderPanics(t *testing.T) {
	needKernel(t)
	var report bytes.Buffer
	calls := 0
	var mu sync.Mutex
	st, err := Run(context.Background(), Config{
		Path: "/bin/bash", Argv: []string{"bash", "-c", "/bin/true; echo $?"}, Env: os.Environ(), Report: &report,
		Decide: func(x Exec) Verdict {
			mu.Lock()
			defer mu.Unlock()
			if calls++; calls == 2 {
				panic("boom")
			}
			return Verdict{Allow: true}
		},
	})
	if err != nil || st.Code != 0 || !strings.Contains(report.String(), "deciding it failed: boom") {
		t.Errorf("status %+v, err %v, report %q", st, err, report.String())
	}
}

// A PATH search's misses fail with ENOENT, as without the supervisor,
// undecided (nothing ran); the hit is decided, and a denied one refused.
func TestRunPathMisses(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	r := &recorder{deny: map[string]bool{"touch": true}}
	st, stdout, out := runScript(t, dir, r, false, nil,
		`export PATH="$PWD/none:$PWD/nodir/x:/usr/bin:/bin"; env true; echo "true=$?"; env no-such-prog; echo "miss=$?"; env touch made; echo "touch=$?"`)
	if st.Code != 0 || stdout != "true=0\nmiss=127\ntouch=126\n" {
		t.Errorf("status %+v, stdout %q\n%s", st, stdout, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
		t.Errorf("touch ran")
	}
	for _, x := range r.seen {
		if strings.Contains(x.Path, "/none/") || strings.Contains(x.Path, "/nodir/") || strings.Contains(x.Path, "no-such-prog") {
			t.Errorf("a miss was decided: %+v", x)
		}
	}
	if n := strings.Count(out, "denied at run time"); n != 1 {
		t.Errorf("%d refusals reported, want 1 (touch):\n%s", n, out)
	}
}

func init() {
	// without-landlock ARGS: run this test binary with ARGS where
	// Landlock is missing (landlock_create_ruleset fails with ENOSYS).
	helpers["without-landlock"] = func(args []string) int {
		insns, err := assemble([]insn{
			{code: bpfLdAbs, k: offNr},
			{code: bpfJeq, k: unix.SYS_LANDLOCK_CREATE_RULESET, jt: "enosys"},
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
		if err == nil {
			err = unix.Exec(os.Args[0], append([]string{os.Args[0]}, args...), os.Environ())
		}
		fmt.Println("without-landlock:", err)
		return 1
	}
}

// Where the kernel lacks the layer, its tests skip and say what is
// missing; where CI requires the layer (AGENT_SHIM_TEST_LAYER=required),
// they fail.
func TestLayerRequired(t *testing.T) {
	needKernel(t)
	for _, required := range []bool{false, true} {
		cmd := exec.Command(os.Args[0], "without-landlock", "-test.run=^TestRunStatus$", "-test.v")
		cmd.Env = append(os.Environ(), "AGENT_SHIM_TEST_LAYER=")
		if required {
			cmd.Env = append(cmd.Env, "AGENT_SHIM_TEST_LAYER=required")
		}
		out, err := cmd.CombinedOutput()
		s := string(out)
		switch {
		case !strings.Contains(s, "Landlock is not available"):
			t.Errorf("required %v: the missing feature is not named:\n%s", required, s)
		case !required && (err != nil || !strings.Contains(s, "--- SKIP: TestRunStatus")):
			t.Errorf("not required: %v, want a skip:\n%s", err, s)
		case required && (err == nil || !strings.Contains(s, "--- FAIL: TestRunStatus")):
			t.Errorf("required: %v, want a failure:\n%s", err, s)
		}
	}
}

// An execution the same as one allowed on the line, in every field the
// decider reads, is allowed without asking it again; one that differs in
// any (its argv, its program's file behind the same name, its #! line)
// is asked about, and a refusal is asked about and reported every time.
func TestRunDecidesOnce(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	r := &recorder{deny: map[string]bool{"touch": true}}
	script := `for i in 1 2 3; do /bin/true same; done; /bin/true other
printf '#!/bin/sh\n' > s; chmod +x s; ./s; ./s; printf '#!/bin/bash\n' > s; ./s
ln -s /bin/true p; ./p; ./p; rm p; ln -s /bin/echo p; ./p
for i in 1 2; do touch denied; done; echo done`
	st, stdout, out := runScriptWith(t, dir, Config{Decide: r.decide}, script)
	if st.Code != 0 || !strings.HasSuffix(stdout, "done\n") {
		t.Fatalf("status %+v, stdout %q\n%s", st, stdout, out)
	}
	count := map[string]int{}
	for _, x := range r.seen {
		count[x.String()+"|"+x.Real+"|"+strings.Join(x.Interp, " ")]++
	}
	real := func(name string) string {
		p, err := exactPath(name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	touch := real("touch")
	for k, want := range map[string]int{
		"/bin/true same|" + real("true") + "|":  1,
		"/bin/true other|" + real("true") + "|": 1,
		dir + "/s|" + dir + "/s|/bin/sh":        1,
		dir + "/s|" + dir + "/s|/bin/bash":      1,
		dir + "/p|" + real("true") + "|":        1,
		dir + "/p|" + real("echo") + "|":        1,
		touch + " denied|" + touch + "|":        2,
	} {
		if count[k] != want {
			t.Errorf("%q decided %d times, want %d (all: %v)", k, count[k], want, count)
		}
	}
	if n := strings.Count(out, "denied at run time"); n != 2 {
		t.Errorf("%d refusals reported, want 2:\n%s", n, out)
	}
}

// A writable path reached through a link in a directory the tree may
// write, to one it may not, is not writable: an earlier line may have
// replaced TMPDIR (under /tmp) by a link to the home directory. A link
// the tree could not have made (in a directory it may not write) still
// leads where it says.
func TestRunWritableThroughPlantedLink(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	tmp, home, ro, elsewhere := filepath.Join(dir, "tmp"), filepath.Join(dir, "home"), filepath.Join(dir, "ro"), filepath.Join(dir, "elsewhere")
	for _, d := range []string{tmp, home, ro, elsewhere} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// What an earlier line left: tmp/user-tmp, the person's TMPDIR, is now
	// a link to home.
	if err := os.Symlink(home, filepath.Join(tmp, "user-tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(ro, "link")); err != nil {
		t.Fatal(err)
	}
	writable := []string{tmp, filepath.Join(tmp, "user-tmp"), filepath.Join(ro, "link")}
	script := `echo x > tmp/user-tmp/planted; echo "planted=$?"; echo y > ro/link/ok; echo "ok=$?"; touch tmp/mine; chmod 600 tmp/user-tmp/ 2>/dev/null; echo end`
	st, stdout, out := runScriptWith(t, dir, Config{Decide: (&recorder{}).decide, Confine: true, Writable: writable}, script)
	if st.Code != 0 || !strings.Contains(stdout, "end") {
		t.Fatalf("status %+v, stdout %q\n%s", st, stdout, out)
	}
	if _, err := os.Stat(filepath.Join(home, "planted")); err == nil {
		t.Errorf("the tree wrote in the home directory through a link in tmp:\n%s%s", stdout, out)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "ok")); err != nil || !strings.Contains(stdout, "ok=0") {
		t.Errorf("a link the tree could not have made: %v\n%s%s", err, stdout, out)
	}
	if !strings.Contains(out, "reached through a link in a directory the tree may write") || !strings.Contains(out, filepath.Join(tmp, "user-tmp")) {
		t.Errorf("not reported:\n%s", out)
	}
}
