//go:build linux && (amd64 || arm64)

package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// File flags (linux/fs.h).
const (
	fsImmutableFl = 0x10
	fsNoatimeFl   = 0x80
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		skipLacking(t, "this class of attack needs root, and this test runs as uid %d", os.Geteuid())
	}
}

// capLines reads the capability sets and no_new_privs a script printed
// (grep of /proc/self/status).
func capLines(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && (strings.HasPrefix(k, "Cap") || k == "NoNewPrivs") {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

const showCaps = `grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status`

// The tree holds no capability, root or not: its bounding, ambient and
// inheritable sets are empty, so every program it runs starts with none
// (as root it would otherwise keep all of root's). A line granted
// Privileged keeps the supervisor's, and set-user-ID programs work.
func TestRunNoCapabilities(t *testing.T) {
	needKernel(t)
	for _, confine := range []bool{true, false} {
		_, stdout, out := runScriptWith(t, t.TempDir(), Config{Decide: (&recorder{}).decide, Confine: confine}, showCaps)
		got := capLines(stdout)
		want := map[string]string{"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000",
			"CapBnd": "0000000000000000", "CapAmb": "0000000000000000", "NoNewPrivs": "1"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("confine %v: %s = %q, want %q\n%s%s", confine, k, got[k], v, stdout, out)
			}
		}
	}
	needRoot(t)
	// Granted, as root: root's capabilities, and no no_new_privs, so
	// that a set-user-ID program (here one that makes itself nobody)
	// takes effect.
	dir := t.TempDir()
	id, err := exec.LookPath("id")
	if err != nil {
		skipLacking(t, "no id: %v", err)
	}
	suid := filepath.Join(dir, "id")
	if b, err := os.ReadFile(id); err != nil || os.WriteFile(suid, b, 0o755) != nil {
		t.Fatal(err)
	}
	if err := os.Chown(suid, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, _ := os.ReadFile("/proc/self/status")
	mine := capLines(string(self))
	for _, grant := range []Grant{{}, {Privileged: true}} {
		_, stdout, out := runScriptWith(t, dir, Config{Decide: (&recorder{}).decide, Confine: true, Grant: grant}, showCaps+`; echo "euid $(./id -u)"`)
		got := capLines(stdout)
		switch {
		case grant.Privileged && (got["CapBnd"] != mine["CapBnd"] || got["CapEff"] != mine["CapEff"] || got["NoNewPrivs"] != "0" || !strings.Contains(stdout, "euid 65534")):
			t.Errorf("privileged: got %v, want the supervisor's %v and euid 65534\n%s%s", got, mine, stdout, out)
		case !grant.Privileged && !strings.Contains(stdout, "euid 0"):
			t.Errorf("a set-user-ID program took effect under no_new_privs:\n%s%s", stdout, out)
		}
	}
}

func init() {
	// privileged-grant: Run a line granted Privileged, as whoever runs
	// this.
	helpers["privileged-grant"] = func(args []string) int {
		_, err := Run(context.Background(), Config{
			Path: "/bin/true", Argv: []string{"true"}, Env: os.Environ(), Grant: Grant{Privileged: true},
			Decide: func(Exec) Verdict { return Verdict{Allow: true} },
		})
		fmt.Println("privileged:", errors.Is(err, ErrPrivileged), err)
		return 0
	}
}

// A supervisor that is not root cannot run a privileged line (it would
// need to leave no_new_privs unset): Run says so, and nothing runs.
func TestRunPrivilegedNeedsRoot(t *testing.T) {
	needKernel(t)
	needRoot(t) // to become nobody
	bin := copyForNobody(t)
	cmd := exec.Command(bin, "privileged-grant")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "privileged: true") {
		t.Errorf("%v\n%s", err, out)
	}
}

// copyForNobody copies this test binary where nobody may run it.
func copyForNobody(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "unprivileged")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "supervisor.test")
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
	return bin
}

// A Grant's writable paths are the tree's to write for that line only.
func TestRunGrantWritable(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	local := filepath.Join(dir, "home", ".local")
	if err := os.MkdirAll(local, 0o755); err != nil {
		t.Fatal(err)
	}
	script := `echo x > home/.local/installed; echo "status=$?"`
	for _, grant := range []Grant{{}, {Writable: []string{local}}} {
		_, stdout, out := runScriptWith(t, dir, Config{Decide: (&recorder{}).decide, Confine: true, Writable: []string{filepath.Join(dir, "ck")}, Grant: grant}, script)
		_, err := os.Stat(filepath.Join(local, "installed"))
		if granted := len(grant.Writable) > 0; granted != (err == nil) || granted != strings.Contains(stdout, "status=0") {
			t.Errorf("granted %v: stdout %q, stat %v\n%s", granted, stdout, err, out)
		}
	}
}

// losetup attaches a loop device to a file of n bytes and returns the
// device and the file.
func losetup(t *testing.T, n int) (dev, file string) {
	t.Helper()
	needRoot(t)
	losetup, err := exec.LookPath("losetup")
	if err != nil {
		skipLacking(t, "no losetup: %v", err)
	}
	file = filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(file, make([]byte, n), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(losetup, "--find", "--show", file).CombinedOutput()
	if err != nil {
		skipLacking(t, "no loop device (%v): %s", err, out)
	}
	dev = strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command(losetup, "--detach", dev).Run() })
	return dev, file
}

// The tree cannot make a device node, however it spells it, at any level
// and granted or not: a block device made inside the checkout, over a
// loop device here, would write to the disk behind it, outside any
// confinement.
func TestRunNoDeviceNodes(t *testing.T) {
	needKernel(t)
	dev, file := losetup(t, 1<<20)
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	maj, mnr := unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))
	script := fmt.Sprintf(`mknod blk b %d %d; echo "mknod=$?"
ln %s blk2; echo "ln=$?"
cp -a %s blk3; echo "cp=$?"
mknod chr c 1 3; echo "chr=$?"
printf PWNED | dd of=blk conv=notrunc status=none; printf PWNED | dd of=blk3 conv=notrunc status=none; echo written`, maj, mnr, dev, dev)
	for _, tc := range []struct {
		confine bool
		grant   Grant
	}{{true, Grant{}}, {false, Grant{}}, {true, Grant{Privileged: true}}} {
		dir := t.TempDir()
		_, stdout, out := runScriptWith(t, dir, Config{Decide: (&recorder{}).decide, Confine: tc.confine, Writable: []string{dir}, Grant: tc.grant}, script)
		for _, name := range []string{"blk", "blk2", "blk3", "chr"} {
			if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && fi.Mode()&os.ModeDevice != 0 {
				t.Errorf("confine %v, %+v: %s is a device node (%v)\n%s%s", tc.confine, tc.grant, name, fi.Mode(), stdout, out)
			}
		}
		for _, w := range []string{"mknod=0", "ln=0", "cp=0", "chr=0"} {
			if strings.Contains(stdout, w) {
				t.Errorf("confine %v, %+v: %s\n%s%s", tc.confine, tc.grant, w, stdout, out)
			}
		}
	}
	// Through the device (its cache) and the file behind it.
	for _, p := range []string{dev, file} {
		b := make([]byte, 5)
		if f, err := os.Open(p); err == nil {
			f.ReadAt(b, 0)
			f.Close()
		}
		if bytes.Equal(b, []byte("PWNED")) {
			t.Errorf("%s was written through a device node the tree made", p)
		}
	}
}

// The tree cannot change the flags of a file outside the directories it
// may write (chattr, FS_IOC_SETFLAGS), whatever the descriptor's mode;
// inside it can, but for those only root's capabilities allow
// (immutable, append-only), which it has not.
func TestRunChattr(t *testing.T) {
	needKernel(t)
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		skipLacking(t, "no chattr: %v", err)
	}
	dir := t.TempDir()
	in, outside := filepath.Join(dir, "in"), filepath.Join(dir, "outside")
	for _, d := range []string{in, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flags := func(p string) int {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		v, err := unix.IoctlGetInt(int(f.Fd()), unix.FS_IOC_GETFLAGS)
		if err != nil {
			skipLacking(t, "the file system of %s has no file flags: %v", p, err)
		}
		return v
	}
	before := flags(filepath.Join(outside, "f"))
	t.Cleanup(func() { exec.Command(chattr, "-i", "-a", filepath.Join(in, "f"), filepath.Join(outside, "f")).Run() })
	script := chattr + ` +A outside/f; echo "outside=$?"; ` + chattr + ` +A in/f; echo "inside=$?"; ` + chattr + ` +i in/f; echo "immutable=$?"`
	_, stdout, out := runScriptWith(t, dir, Config{Decide: (&recorder{}).decide, Confine: true, Writable: []string{in}}, script)
	if after := flags(filepath.Join(outside, "f")); after != before {
		t.Errorf("the flags of a file outside the scope changed: %#x -> %#x\n%s%s", before, after, stdout, out)
	}
	if !strings.Contains(stdout, "outside=1") || !strings.Contains(stdout, "inside=0") || !strings.Contains(out, "outside the directories the tree may write") {
		t.Errorf("stdout %q\n%s", stdout, out)
	}
	if os.Geteuid() == 0 && (!strings.Contains(stdout, "immutable=1") || flags(filepath.Join(in, "f"))&fsImmutableFl != 0) {
		t.Errorf("root's tree made a file immutable: %q\n%s", stdout, out)
	}
	if got := flags(filepath.Join(in, "f")); got&fsNoatimeFl == 0 {
		t.Errorf("inside: flags %#x, want noatime (%s)", got, strconv.Quote(stdout))
	}
}
