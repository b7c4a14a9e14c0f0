//go:build linux && (amd64 || arm64)

package supervisor

import (
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
	// thread-exec KIND DENIED ALLOWED ARG: a thread with a descriptor
	// table (KIND files) or a working directory (KIND fs) of its own
	// executes a path that names ALLOWED for it and DENIED for its
	// process (/proc/self/...), as the kernel resolves /proc/self: the
	// process's. ARG is the argument both get.
	helpers["thread-exec"] = func(args []string) int {
		kind, denied, allowed, arg := args[0], args[1], args[2], args[3]
		done := make(chan int)
		var path string
		switch kind {
		case "files", "dev-fd", "thread-self":
			// The process's descriptor fd holds DENIED; the thread's,
			// after it unshares its table, ALLOWED.
			fd, err := unix.Open(denied, unix.O_RDONLY, 0)
			if err != nil {
				fmt.Println("open:", err)
				return 1
			}
			path = "/proc/self/fd/" + strconv.Itoa(fd)
			switch kind {
			case "dev-fd":
				path = "/dev/fd/" + strconv.Itoa(fd)
			case "thread-self": // the thread's: the kernel runs ALLOWED
				path = "/proc/thread-self/fd/" + strconv.Itoa(fd)
			}
			offLeader(func() {
				if err := unix.Unshare(unix.CLONE_FILES); err != nil {
					fmt.Println("unshare:", err)
					done <- 1
					return
				}
				a, err := unix.Open(allowed, unix.O_RDONLY, 0)
				if err == nil {
					err = unix.Dup3(a, fd, 0)
				}
				if err != nil {
					fmt.Println("dup:", err)
					done <- 1
					return
				}
				done <- threadExec(path, []string{filepath.Base(allowed), arg})
			})
		case "fs", "relative":
			// The process's working directory holds DENIED as x; the
			// thread's, after it unshares its, ALLOWED as x.
			mine, theirs := filepath.Join(arg+".d", "process"), filepath.Join(arg+".d", "thread")
			for d, target := range map[string]string{mine: denied, theirs: allowed} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					fmt.Println(err)
					return 1
				}
				if err := os.Symlink(target, filepath.Join(d, "x")); err != nil {
					fmt.Println(err)
					return 1
				}
			}
			if err := os.Chdir(mine); err != nil {
				fmt.Println(err)
				return 1
			}
			path = "/proc/self/cwd/x"
			if kind == "relative" { // the thread's: the kernel runs ALLOWED
				path = "x"
			}
			offLeader(func() {
				if err := unix.Unshare(unix.CLONE_FS); err != nil {
					fmt.Println("unshare:", err)
					done <- 1
					return
				}
				if err := unix.Chdir(filepath.Join("..", "thread")); err != nil {
					fmt.Println("chdir:", err)
					done <- 1
					return
				}
				done <- threadExec(path, []string{filepath.Base(allowed), arg})
			})
		case "shared":
			// A thread that shares its process's entries: both views
			// agree, and ALLOWED runs.
			fd, err := unix.Open(allowed, unix.O_RDONLY, 0)
			if err != nil {
				fmt.Println("open:", err)
				return 1
			}
			offLeader(func() { done <- threadExec("/proc/self/fd/"+strconv.Itoa(fd), []string{filepath.Base(allowed), arg}) })
		default:
			fmt.Println("unknown kind", kind)
			return 1
		}
		return <-done
	}
}

// offLeader runs f on a thread of its own that is not the thread group's
// leader (whose descriptors and directory /proc/self names), and never
// gives the thread back.
func offLeader(f func()) {
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if unix.Gettid() == unix.Getpid() {
			offLeader(f) // keep the leader, try another
			select {}
		}
		f()
	}()
}

// threadExec executes path from the calling thread (syscall.Exec would
// too, but says nothing when it fails).
func threadExec(path string, argv []string) int {
	p, _ := syscall.BytePtrFromString(path)
	av, _ := syscall.SlicePtrFromStrings(argv)
	ev, _ := syscall.SlicePtrFromStrings(os.Environ())
	_, _, errno := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&av[0])), uintptr(unsafe.Pointer(&ev[0])))
	fmt.Println("thread-exec:", errno)
	return 1
}

// A thread's descriptors and working directory may be its own
// (unshare(CLONE_FILES), unshare(CLONE_FS)), while /proc/self and /dev/fd
// in the path it executes are its process's, as the kernel resolves them.
// An execution whose program is one file for the thread and another for
// its process is refused: the supervisor never decides ls while the
// kernel runs touch. So is one that names the thread's own entries
// (a relative path, /proc/thread-self) where they differ from the
// process's, though the kernel would run what was decided: the program
// and whatever reads the path again would not agree.
func TestRunThreadViews(t *testing.T) {
	needKernel(t)
	touch, err := exactPath("touch")
	if err != nil {
		skipLacking(t, "no touch to refuse: %v", err)
	}
	ls, err := exactPath("ls")
	if err != nil {
		skipLacking(t, "no ls to allow: %v", err)
	}
	for _, kind := range []string{"files", "dev-fd", "fs", "relative", "thread-self"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(dir, "denied")
			r := &recorder{deny: map[string]bool{"touch": true}}
			st, out := runSelf(t, Config{Decide: r.decide, Dir: dir}, "thread-exec", kind, touch, ls, marker)
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("touch ran while the supervisor decided ls:\n%s", out)
			}
			if st.Code != 1 || !strings.Contains(out, "thread-exec: operation not permitted") ||
				!strings.Contains(out, "another file for its thread") {
				t.Errorf("status %+v:\n%s", st, out)
			}
		})
	}
}

// A thread that shares its process's entries executes through them as
// any process does.
func TestRunThreadViewsAgree(t *testing.T) {
	needKernel(t)
	ls, err := exactPath("ls")
	if err != nil {
		skipLacking(t, "no ls to allow: %v", err)
	}
	dir := t.TempDir()
	r := &recorder{deny: map[string]bool{"touch": true}}
	st, out := runSelf(t, Config{Decide: r.decide, Dir: dir}, "thread-exec", "shared", ls, ls, dir)
	if st.Code != 0 || strings.Contains(out, "denied") || strings.Contains(out, "thread-exec:") {
		t.Errorf("status %+v:\n%s", st, out)
	}
}

// exactPath is the file a program name finds on PATH, every link
// resolved.
func exactPath(name string) (string, error) {
	for _, dir := range []string{"/usr/bin", "/bin"} {
		if p, err := filepath.EvalSymlinks(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no %s in /usr/bin or /bin", name)
}

// The tree cannot give itself another view of the files than the
// supervisor's: in a user and mount namespace of its own it may not mount
// (Landlock refuses every mount in its domain), so a path names the same
// file for it as for the supervisor.
func TestRunNoMounts(t *testing.T) {
	needKernel(t)
	touch, err := exactPath("touch")
	if err != nil {
		skipLacking(t, "no touch to refuse: %v", err)
	}
	ls, err := exactPath("ls")
	if err != nil {
		skipLacking(t, "no ls to allow: %v", err)
	}
	unshare, err := exactPath("unshare")
	if err != nil {
		skipLacking(t, "no unshare: %v", err)
	}
	for _, confine := range []bool{false, true} {
		dir := t.TempDir()
		r := &recorder{deny: map[string]bool{"touch": true}}
		script := `cp ` + ls + ` ./ls && ` + unshare + ` -Urm --propagation unchanged sh -c 'mount --bind ` + touch + ` ./ls; echo "mount=$?"; ./ls denied'; echo done`
		st, stdout, out := runScriptWith(t, dir, Config{Decide: r.decide, Confine: confine, Writable: []string{dir}}, script)
		t.Logf("confine %v: %s%s", confine, stdout, out)
		if _, err := os.Stat(filepath.Join(dir, "denied")); err == nil {
			t.Errorf("confine %v: touch ran as ./ls:\n%s", confine, out)
		}
		if st.Code != 0 || !strings.Contains(stdout, "done") || strings.Contains(stdout, "mount=0") {
			t.Errorf("confine %v: status %+v, stdout %q\n%s", confine, st, stdout, out)
		}
	}
}

// Nor can it take another root or another mount namespace, where the
// paths it executes would name other files: chroot fails, and so does
// joining a mount namespace made outside the tree, even for a line
// granted root's capabilities (which nsenter needs). Here that
// namespace, kept on a file, holds touch where ours holds ls.
func TestRunNoOtherRoot(t *testing.T) {
	needKernel(t)
	needRoot(t)
	touch, err := exactPath("touch")
	if err != nil {
		skipLacking(t, "no touch to refuse: %v", err)
	}
	ls, err := exactPath("ls")
	if err != nil {
		skipLacking(t, "no ls to allow: %v", err)
	}
	for _, prog := range []string{"unshare", "nsenter", "chroot", "mount", "umount"} {
		if _, err := exec.LookPath(prog); err != nil {
			skipLacking(t, "no %s: %v", prog, err)
		}
	}
	dir := t.TempDir()
	if b, err := os.ReadFile(ls); err != nil || os.WriteFile(filepath.Join(dir, "ls"), b, 0o755) != nil {
		t.Fatal(err)
	}
	// A mount namespace made outside the tree, where dir/ls is touch,
	// kept on the file ns/mnt (of a private mount, as unshare needs).
	nsDir, nsFile := filepath.Join(dir, "ns"), filepath.Join(dir, "ns", "mnt")
	sh := func(script string, args ...string) {
		t.Helper()
		if out, err := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...).CombinedOutput(); err != nil {
			skipLacking(t, "cannot make a mount namespace on a file: %v\n%s", err, out)
		}
	}
	sh(`mkdir "$1" && mount -t tmpfs none "$1" && mount --make-private "$1" && touch "$2"`, nsDir, nsFile)
	t.Cleanup(func() { exec.Command("umount", nsFile).Run(); exec.Command("umount", nsDir).Run() })
	sh(`unshare --mount="$1" --propagation private mount --bind "$2" "$3"`, nsFile, touch, filepath.Join(dir, "ls"))
	r := &recorder{deny: map[string]bool{"touch": true}}
	script := `nsenter --mount=ns/mnt "$PWD/ls" "$PWD/denied"; echo "nsenter=$?"
mkdir -p sub && cp ` + ls + ` sub/ls && unshare -r chroot "$PWD/sub" /ls; echo "chroot=$?"`
	_, stdout, outs := runScriptWith(t, dir, Config{Decide: r.decide, Grant: Grant{Privileged: true}}, script)
	if _, err := os.Stat(filepath.Join(dir, "denied")); err == nil {
		t.Errorf("touch ran as %s/ls in another mount namespace:\n%s%s", dir, stdout, outs)
	}
	for _, want := range []string{"nsenter: reassociate to namespace 'ns/mnt' failed: Operation not permitted", "chroot: cannot change root directory to"} {
		if !strings.Contains(outs, want) {
			t.Errorf("no %q in\n%s%s", want, stdout, outs)
		}
	}
}
