// Package supervisor runs a process tree under a run-time policy (Linux):
// every execve and execveat in the tree is reported to the supervisor
// before it happens (seccomp user notification), which reads the exact
// program, argv and working directory (process_vm_readv, /proc/<pid>/) and
// lets it go on or fails it with EPERM; and the tree's file writes are confined to a set of directories
// (Landlock). The decision itself is the caller's (see Config.Decide).
//
// The program's process restricts itself before its execve, which the
// filter reports as its first notification: no_new_privs, no
// capabilities, the Landlock domain and the seccomp filter, whose
// listener it hands to the supervisor over a socket. So the program is
// restricted from its first instruction (its own execution is decided
// like any other), and no thread of the supervisor is ever restricted or
// in the tree's domain (where a process of the tree could trace it, and
// through it the supervisor's memory). While the tree runs the supervisor
// is not dumpable, so that nothing of the user's can trace it either,
// whatever Yama says. On amd64 the program's process is a clone sharing
// the supervisor's memory until its execve (no page table copied,
// nothing left copy-on-write) on a stack of its own; on arm64 it is a
// plain fork. Either way it runs one routine (spawnChild), raw system
// calls only, and starts as a shell in the supervisor's place would
// start it: its standard streams as given, the descriptors the supervisor
// inherited open (those it opened itself are closed at the execve, and
// when they cannot be, it does not start), the soft RLIMIT_NOFILE the
// supervisor started with (Go raises it), every signal at its default
// action but those the supervisor started ignoring (Go lets a program
// know that of SIGHUP and SIGINT only: nohup's, and a background job's;
// it takes over the others before any package starts). Its first
// execution is decided from what the caller passed, since a process in
// the supervisor's memory is not dumpable and cannot be read.
//
// The protected paths of a checkout (its repositories' git control
// files and hooks, the manifests, agent settings: see TakeSnapshot),
// which Landlock cannot keep out of a writable checkout, are read-only
// for the tree where the kernel allows a mount namespace (Config.Protect:
// see namespace_linux.go); Snapshot and Restore undo a line's changes to
// them after it, whatever held, through descriptors the tree cannot
// redirect. Where the namespace holds, what the line leaves running goes
// on with the paths still read-only for it; where only the undo holds, it
// ends with the line (Status.Ended). The person's credential stores
// (Config.Secrets, DefaultSecrets) are out of the tree's reach: masked in
// its namespace, or refused by Landlock where there is none.
//
// # What an execution is
//
// The program is resolved as the kernel will resolve it for the calling
// thread, never as the supervisor would: relative paths against the
// thread's working directory or execveat's descriptor (a thread may have
// its own, by unshare), /proc/thread-self as the thread's, /proc/self and
// /dev/fd as its process's, and every link of /proc/<pid>/ (a descriptor,
// cwd, exe) followed to the file it holds, which must still be at its
// name. A path that names one file for the thread and another for its
// process is refused: the program would read the one, the kernel run the
// other. Nor may the tree change what a path names for it: it may not
// mount anything (Landlock refuses mounts in its domain, in a namespace
// of its own too), chroot, or join another mount namespace (the filter
// refuses both), so its root and its files are the supervisor's. A
// memfd, a deleted file, a pipe, or a file whose name now holds another,
// cannot be run.
// A dynamic loader (ld-linux*.so*, ld.so, a copy of one) is a runner: the
// program it loads is an execution too (Exec.Loaded), and its --preload,
// --audit and --library-path count as the variables. The variables that
// load code into a program (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH,
// GCONV_PATH, …) are read from the caller's environment and shown to the
// decider (Exec.Env) when the tree set them. A hard link or a byte-for-byte
// copy of a restricted program (Config.Programs found on PATH) is decided
// as that program (Exec.Copies); a copy changed by one byte is not.
//
// # What else the filter holds
//
//   - TIOCSTI and TIOCLINUX fail with EPERM: nothing in the tree can type
//     into a terminal, the person's next approval prompt included.
//   - connect to a Unix socket of a server that runs what it is told as
//     the person (a tmux server, screen, systemd and the user's session
//     bus, Docker, containerd, Podman) fails with EPERM, unless the caller
//     is that very program as found on the tree's PATH, whose execution
//     was decided. Not covered: abstract sockets (X11's among them), the
//     X11 and Wayland displays (a tree can send key events to the
//     person's windows), ssh-agent and gpg-agent (the person's keys, not
//     commands), and a socket the tree received already connected.
//   - io_uring_setup fails: a ring's operations would pass the filter.
//   - with Confine, chmod, chown, utimes and the xattr calls (every
//     spelling: path, descriptor, *at, fchmodat2) on a file outside the
//     writable directories fail with EPERM; the path is resolved as the
//     caller sees it. So do the ioctls that change a file's flags and
//     attributes in place whatever the descriptor's mode (chattr's
//     FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR, fs-verity, encryption policies,
//     and the file systems' own: every request of those ioctl types but
//     the ones that only read). Landlock has no right for metadata, hence
//     the filter.
//   - mknod and mknodat of a device fail with EPERM, at every level (and
//     Landlock refuses making, linking or renaming one everywhere).
//   - the i386 (and arm32) compatibility mode may not exec, connect,
//     change metadata or file flags, or make nodes; x32 and foreign
//     architectures are killed.
//
// # Capabilities, and what root may still change
//
// The tree holds no capability: the program's process empties the
// bounding, ambient and inheritable sets, from which an execution
// computes a program's capabilities, so from the program's first
// execution on every process of the tree has none, whoever runs it (as
// root it would keep all of root's, no_new_privs or not). Run as root,
// the tree is uid 0 without privilege. It may still, as the owner of
// most of the system's files: write files uid 0 owns and change their
// mode, times and flags, within the writable directories when writes
// are confined (everywhere without Confine, as any user may where the
// user may); read what their modes let their owner read; signal and
// connect to the person's processes of uid 0 (a signal needs only the
// same uid). It may not: make device nodes, override a file's
// permissions, set immutable or append-only flags, mount, load kernel
// modules, trace a process outside the tree, change a file's owner, bind
// a port below 1024 or set the clock. A line a person approved may be
// granted more (Config.Grant): writable paths, or root's capabilities.
//
// Cross-directory renames and links work inside the writable directories
// and, without Confine, everywhere (Landlock ABI 2's REFER right; on ABI 1
// Landlock refuses them all with EXDEV).
//
// # What remains: the time between the check and the use
//
// The supervisor is unprivileged: it cannot stop the tree, copy its
// arguments into memory the tree cannot write, or perform the call on the
// tree's behalf (SECCOMP_USER_NOTIF_FLAG_CONTINUE lets the kernel read the
// arguments again after the answer). So:
//
//   - argv and path: after an allowing decision every byte the decision
//     read (the path, argv and environment strings and the arrays that
//     point to them) is read again, and the execution refused when one
//     changed. A writer that changes them
//     after that second reading and before the kernel copies them (a
//     thread of the process, a process sharing its memory by CLONE_VM or
//     a shared mapping) still wins; the window is the answer's round trip,
//     a few microseconds.
//   - files: the program file, a link on its path, a metadata call's or a
//     socket's path can be swapped between the check and the call by any
//     process of the tree. Landlock keeps such swaps inside the writable
//     directories; the identity checks make the swap a race rather than a
//     path trick.
//   - what the tree leaves running after the line cannot execute anything
//     (the listener is closed: ENOSYS), but may still write inside the
//     writable directories and change metadata there; the protected
//     paths stay read-only for it where they were (and a protected path
//     missing at the start, such as .git/commondir, which git reads
//     when it appears, can be created by it after the undo).
//
// Where the kernel lacks either feature (other systems, old kernels,
// seccomp blocked by a container), Available says why, and Run fails with
// ErrUnavailable.
package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrUnavailable means the run-time layer cannot run here; the error
// wrapping it says why.
var ErrUnavailable = errors.New("run-time layer unavailable")

// Config says what to run and how to decide it.
type Config struct {
	// Path is the program to run, absolute; Argv its arguments
	// (argv[0] included); Env its environment; Dir its working
	// directory ("" is ours).
	Path string
	Argv []string
	Env  []string
	Dir  string
	// Stdin, Stdout and Stderr become the tree's fds 0, 1 and 2; nil
	// is /dev/null.
	Stdin, Stdout, Stderr *os.File
	// Confine confines the tree's file writes to Writable: directories
	// (and the files in them) or single files, absolute. Paths that do
	// not exist are left out, and so is a path reached through a link
	// that lies in another of them and leads outside them all (an
	// earlier line could have made it: TMPDIR under /tmp replaced by a
	// link to the home directory); Report says so. Without Confine the
	// tree may write where the user may.
	Confine  bool
	Writable []string
	// Decide decides one execution. It is called concurrently, and
	// must not block on the tree. Nil refuses every execution. Its
	// verdict must follow from the Exec alone, its Pid aside: an
	// execution the same in every other field as one it allowed on this
	// line (the same program, argv, directory, interpreter, loaded code,
	// copies) is allowed again without asking it.
	Decide func(Exec) Verdict
	// Report receives one line for every execution refused; nil drops
	// them.
	Report io.Writer
	// Programs are the names of the programs the decider restricts: a
	// file the tree executes that is one of them found on the tree's
	// PATH (a hard link, or a copy: the same content), under another
	// name, is decided as that program too (Exec.Copies). The dynamic
	// loaders are always among them.
	Programs []string
	// Secrets are files and directories (absolute) the tree may not
	// read, with all below them: the person's credential stores
	// (DefaultSecrets), the shim's own keys. Everything else stays
	// readable. See allowReadsBut for what appears later beside them.
	Secrets []string
	// Protect is the snapshot of the protected paths of the checkouts
	// the tree may write (TakeSnapshot): where the kernel allows a mount
	// namespace, the tree runs in one where they are read-only
	// (Status.Prevented); where it does not, what the line leaves
	// running is ended when it ends (Status.Ended), so that nothing
	// writes after the caller's undo (Snapshot.Restore). Nil: neither.
	Protect *Snapshot
	// Keep are the protected paths a person approved the line to write
	// (gate.Approval.Writes): they, and what lies below them, stay
	// writable.
	Keep []string
	// Grant is what this line may do beyond any line. The caller sets it
	// only for a line a person approved, to what that line needs.
	Grant Grant
}

// DefaultSecrets are the person's credential stores, found as their
// programs find them (getenv reads the variables that move them): SSH
// keys, cloud, GitHub, git, Docker, package-registry and GnuPG
// credentials. The tree never needs them for local work; a line that
// does (an approved git push over SSH) is granted them (Grant.Secrets).
func DefaultSecrets(getenv func(string) string) []string {
	home := getenv("HOME")
	var out []string
	add := func(paths ...string) {
		for _, p := range paths {
			if filepath.IsAbs(p) && !slices.Contains(out, filepath.Clean(p)) {
				out = append(out, filepath.Clean(p))
			}
		}
	}
	inHome := func(rel ...string) {
		if home != "" {
			for _, r := range rel {
				add(filepath.Join(home, r))
			}
		}
	}
	inHome(".ssh", ".aws", ".netrc", ".git-credentials", ".gnupg", ".docker/config.json",
		".config/gh/hosts.yml", ".config/git/credentials", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
		".kube/config", ".config/gcloud", ".azure")
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		add(filepath.Join(x, "gh/hosts.yml"), filepath.Join(x, "git/credentials"), filepath.Join(x, "gcloud"))
	}
	if d := getenv("GH_CONFIG_DIR"); d != "" {
		add(filepath.Join(d, "hosts.yml"))
	}
	if d := getenv("DOCKER_CONFIG"); d != "" {
		add(filepath.Join(d, "config.json"))
	}
	for _, v := range []string{"GNUPGHOME", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "KUBECONFIG", "NETRC"} {
		for _, p := range filepath.SplitList(getenv(v)) {
			add(p)
		}
	}
	return out
}

// secrets are the paths the tree may not read: Secrets, unless granted.
func (c *Config) secrets() []string {
	if c.Grant.Secrets {
		return nil
	}
	return c.Secrets
}

// Grant is what a line a person approved may do under the layer that no
// other line may; the zero Grant is nothing more. It holds for the whole
// tree of the line, since Landlock and capabilities are a process's and
// pass to what it starts: every program the line runs has it. What keeps
// an approval from lending it to anything else is that each of those
// executions is still decided, as if nobody had approved anything but
// the line's own commands (see Config.Decide), and that a grant is
// never a line's that the person did not approve.
//
// An approved `pip install --user x` needs Writable (the user's
// site-packages and scripts directory, ~/.local); an approved `sudo
// apt-get install x` needs Privileged, and writes outside any scope
// (Config.Confine false), as root. Device nodes stay refused, granted or
// not.
type Grant struct {
	// Writable are paths the tree may write besides Config.Writable
	// (with Confine), as Writable says.
	Writable []string
	// Privileged lets the tree keep the capabilities the supervisor has
	// (as root: all) and set-user-ID and file-capability programs (sudo)
	// gain theirs: no_new_privs is not set. Without no_new_privs the
	// filter and the Landlock domain need CAP_SYS_ADMIN: a supervisor
	// without it (not root) fails with ErrPrivileged, and the line cannot
	// run under the layer.
	Privileged bool
	// Secrets lets the tree read Config.Secrets: an approved push over
	// SSH reads the person's keys.
	Secrets bool
}

// ErrPrivileged means a line granted Privileged cannot run under this
// supervisor, which lacks CAP_SYS_ADMIN; nothing ran.
var ErrPrivileged = errors.New("a privileged line needs a supervisor with CAP_SYS_ADMIN (root): an unprivileged one must set no_new_privs, which keeps set-user-ID programs such as sudo from gaining privileges")

// writable is everywhere the tree may write, with Confine.
func (c *Config) writable() []string {
	if len(c.Grant.Writable) == 0 {
		return c.Writable
	}
	return append(slices.Clone(c.Writable), c.Grant.Writable...)
}

// Verdict is the decision on one execution.
type Verdict struct {
	Allow bool
	// Reason says why, in one line: it is reported when the execution
	// is refused.
	Reason string
}

// Exec is one execution the tree is about to make, as read from the
// calling process: exact, but read from memory the process owns (see the
// package README for what a racing thread can do).
type Exec struct {
	Pid int
	// Path is the file to execute as named, made absolute against the
	// working directory (or execveat's directory); Real is it with
	// every link resolved ("" when it cannot be resolved, for a file
	// that does not exist), and ID the file itself, when it was read.
	Path, Real string
	ID         FileID
	// Argv is what the program receives, argv[0] included.
	Argv []string
	// Dir is the calling process's working directory.
	Dir string
	// Interp is the interpreter line of a script (#!), split as the
	// kernel does: the interpreter and at most one argument.
	Interp []string
	// Env holds the variables of the execution's environment that make
	// the dynamic loader load code the program does not name
	// (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, GCONV_PATH, …), as
	// NAME=value, when the tree set them (a value the tree started with
	// is the person's, and left out), and the loader's options that do
	// the same (--preload as LD_PRELOAD=…). A decider should not let such
	// an execution run unasked: the code it loads runs as the program.
	Env []string
	// Copies are the restricted programs (Config.Programs, the dynamic
	// loaders) the file is a hard link or a copy of, by their paths.
	Copies []string
	// Loaded is the program a dynamic loader runs (ld.so PROGRAM ARGS),
	// read and resolved the same way; nil when it runs none.
	Loaded *Exec
	// Interpreted is the execution of a script's interpreter as the
	// kernel makes it (the interpreter, its argument, the script's path
	// as given, the arguments), resolved the same way; nil for a file
	// that is no script.
	Interpreted *Exec

	rawPath string // the path as the call gave it
}

// FileID is a file's identity: its device and inode.
type FileID struct{ Dev, Ino uint64 }

// Spellings returns every argv the execution may amount to, for a caller
// that decides each and takes the strictest: the program as named and as
// resolved (a link named git-push to git is git push), argv[0] as given
// (multi-call programs and git choose by it), and for a script, the
// interpreter's argv the kernel builds; a copy of a restricted program as
// that program; for a dynamic loader, the program it loads, spelled the
// same ways.
func (x Exec) Spellings() [][]string {
	var args []string
	if len(x.Argv) > 1 {
		args = x.Argv[1:]
	}
	with := func(prog string) []string { return append([]string{prog}, args...) }
	out := [][]string{with(x.Path)}
	seen := map[string]bool{filepath.Base(x.Path): true}
	add := func(prog string) {
		if prog == "" || seen[filepath.Base(prog)] {
			return
		}
		seen[filepath.Base(prog)] = true
		out = append(out, with(prog))
	}
	add(x.Real)
	if len(x.Argv) > 0 {
		add(x.Argv[0])
	}
	for _, c := range x.Copies {
		add(c)
	}
	if len(x.Interp) > 0 {
		out = append(out, append(append(append([]string{}, x.Interp...), x.Path), args...))
	}
	if x.Interpreted != nil {
		out = append(out, x.Interpreted.Spellings()...)
	}
	if x.Loaded != nil {
		out = append(out, x.Loaded.Spellings()...)
	}
	return out
}

// key is x as the decider reads it, every field but Pid, in one string:
// two executions with the same key are one decision.
func (x Exec) key() string {
	var b strings.Builder
	x.writeKey(&b)
	return b.String()
}

func (x Exec) writeKey(b *strings.Builder) {
	str := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	list := func(l []string) {
		b.WriteString(strconv.Itoa(len(l)))
		b.WriteByte('[')
		for _, s := range l {
			str(s)
		}
	}
	str(x.Path)
	str(x.Real)
	str(x.Dir)
	str(x.rawPath)
	b.WriteString(strconv.FormatUint(x.ID.Dev, 16))
	b.WriteByte(':')
	b.WriteString(strconv.FormatUint(x.ID.Ino, 16))
	b.WriteByte(':')
	list(x.Argv)
	list(x.Interp)
	list(x.Env)
	list(x.Copies)
	for _, y := range []*Exec{x.Loaded, x.Interpreted} {
		if y == nil {
			b.WriteByte('-')
			continue
		}
		b.WriteByte('+')
		y.writeKey(b)
	}
}

// String is the execution as one line, for messages.
func (x Exec) String() string {
	argv := append([]string{x.Path}, x.Argv[min(1, len(x.Argv)):]...)
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]{}~#") {
			argv[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(argv, " ")
}

// Status is how the supervised program ended: its exit code, or the
// signal that killed it.
type Status struct {
	Code   int
	Signal int // 0 when it exited
	// Prevented says that the protected paths of Config.Protect were
	// read-only for the tree: what it leaves running stays so.
	Prevented bool
	// Ended counts the processes the line left running that were
	// ended with it (Config.Protect, where nothing was prevented).
	Ended int
	// Refused are what the layer refused the tree and saw itself (an
	// execution, a connection, a metadata call), in order, the first
	// maxRefusals of them: for the caller to say, when the line failed,
	// what was refused and what would allow it.
	Refused []Refusal
}

// Refusal is one thing the layer refused the tree.
type Refusal struct {
	// Kind is what was refused: "exec", "connect", "metadata" (chmod,
	// chown, utimes, xattrs, a file's flags), or "unreadable" (a call
	// the layer could not read, refused for that).
	Kind string
	// Path is the program, the socket or the file, as resolved; "" when
	// it could not be read.
	Path string
	// Argv is an execution's.
	Argv []string
	// Call names a metadata call (chmod, ioctl, …).
	Call string
	// Reason is why: the decider's (its rule), or the layer's own rule
	// ("outside the directories the tree may write", "a server that
	// runs what it is told").
	Reason string
	// Scope says that widening what the tree may write would allow it
	// (a metadata call outside the writable directories); false where
	// only the decider's policy, or nothing, would.
	Scope bool
}

// maxRefusals bounds Status.Refused.
const maxRefusals = 64

// ExitCode is the status as a shell reports it: the exit code, or 128+N
// for death by signal N.
func (s Status) ExitCode() int {
	if s.Signal != 0 {
		return 128 + s.Signal
	}
	return s.Code
}

func unavailable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, fmt.Sprintf(format, args...))
}
