//go:build linux && (amd64 || arm64)

package supervisor

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Classic BPF opcodes the filter uses.
const (
	bpfLdAbs   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge     = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset    = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet     = unix.BPF_RET | unix.BPF_K
	bpfAnd     = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	bpfRsh     = unix.BPF_ALU | unix.BPF_RSH | unix.BPF_K
	offNr      = 0  // seccomp_data.nr
	offArch    = 4  // seccomp_data.arch
	offArg1Low = 24 // seccomp_data.args[1], low half (little-endian)
	offArg2Low = 32 // seccomp_data.args[2], low half
)

// none stands for a system call an architecture does not have.
const none = ^uint32(0)

// insn is one instruction with symbolic jump targets.
type insn struct {
	label  string // this instruction's label, if any
	code   uint16
	k      uint32
	jt, jf string // labels; "" is the next instruction
}

// assemble resolves the labels of prog into a filter.
func assemble(prog []insn) ([]unix.SockFilter, error) {
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		jump := func(l string) (uint8, error) {
			if l == "" {
				return 0, nil
			}
			t, ok := at[l]
			if !ok || t <= i || t-i-1 > 255 {
				return 0, fmt.Errorf("bad jump from %d to %q", i, l)
			}
			return uint8(t - i - 1), nil
		}
		jt, err := jump(in.jt)
		if err != nil {
			return nil, err
		}
		jf, err := jump(in.jf)
		if err != nil {
			return nil, err
		}
		out[i] = unix.SockFilter{Code: in.code, Jt: jt, Jf: jf, K: in.k}
	}
	return out, nil
}

// metaCall says where one metadata call keeps its target: the path
// argument (with dirfd, the directory it is relative to, -1 for the
// working directory), or, with fd, the descriptor in argument 0; flags is
// the index of its AT_ flags argument, 0 when it has none (it is never the
// first); nofollow, that it never follows a last link; nullIsFd, that a
// null path means the descriptor dirfd itself (futimesat, utimensat).
type metaCall struct {
	nr       uint32
	name     string
	path     int
	dirfd    int
	flags    int
	fd       bool
	nofollow bool
	nullIsFd bool
}

// Terminal ioctls that make a terminal act as if the person typed:
// TIOCSTI pushes a byte into its input, TIOCLINUX (subcode 2 and 3) pastes
// the console's selection.
const (
	tiocsti   = 0x5412
	tioclinux = 0x541c
)

// fsIoctlTypes are the ioctl types (the request's second byte) of the
// calls that change a file's flags and attributes in place (chattr's
// FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR, fs-verity, encryption policies,
// the inode version, and the file systems' own: ext4's and f2fs's,
// XFS's, Btrfs's, bcachefs's), whatever the descriptor's open mode: 'f',
// 'X', 'v', 0x94 (Btrfs), 0xf5 (f2fs), 0xbc (bcachefs). With Confine
// they go to the supervisor, which lets them change a file only inside
// the writable directories.
var fsIoctlTypes = []uint32{'f', 'X', 'v', 0x94, 0xf5, 0xbc}

// fsIoctlReads are the calls of those types that only read, or write
// only through a descriptor open for writing (a clone into it): they go
// on unasked, wherever the file lies.
var fsIoctlReads = []uint32{
	0x80086601, 0x80046601, // FS_IOC_GETFLAGS, FS_IOC32_GETFLAGS
	0x80087601, 0x80047601, // FS_IOC_GETVERSION, FS_IOC32_GETVERSION
	0x801c581f,             // FS_IOC_FSGETXATTR
	0xc020660b,             // FS_IOC_FIEMAP
	0x40049409, 0x4020940d, // FICLONE, FICLONERANGE (the target is open for writing)
}

// setnsAllowed are the namespaces the tree may join: those that change
// no path's meaning. A mount namespace (or a user namespace, on the way
// to one, or a PID namespace, which /proc shows) of a process outside
// the tree would make the paths the tree executes name other files for
// the kernel than for the supervisor.
const setnsAllowed = unix.CLONE_NEWNET | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC

// File types in a mode (mknod's).
const (
	sIFMT  = 0o170000
	sIFCHR = 0o020000
	sIFBLK = 0o060000
)

// filterProgram is the seccomp filter of the tree:
//   - execve and execveat go to the supervisor; so does connect (control
//     sockets of servers outside the tree, see Config), and with meta the
//     metadata calls (chmod, chown, utimes, xattrs: see metaCalls) and the
//     ioctls that change a file's flags and attributes (fsIoctlTypes);
//   - TIOCSTI and TIOCLINUX fail with EPERM: nothing in the tree may type
//     into a terminal (the next approval prompt among others);
//   - io_uring_setup fails with EPERM: a ring's operations (connect among
//     them) would pass the filter unseen;
//   - mknod and mknodat of a character or block device fail with EPERM
//     (as Landlock does, and the missing CAP_MKNOD);
//   - chroot fails with EPERM, and so does setns but into a network, UTS
//     or IPC namespace: the tree's root and mount namespace stay the
//     supervisor's (Landlock refuses pivot_root and every mount), so a
//     path names the same file for both;
//   - a new seccomp listener is refused (the first listener on an execve
//     would see it instead of the supervisor, once the supervisor is gone);
//   - the compatibility mode may not exec, connect, change metadata or
//     make device nodes at all, and its ioctls are filtered as above but
//     refused where they would go to the supervisor; any other
//     architecture, and x32, kills the process.
func filterProgram(meta bool) []insn {
	prog := []insn{
		{code: bpfLdAbs, k: offArch},
		{code: bpfJeq, k: auditArch, jf: "foreign"},
		{code: bpfLdAbs, k: offNr},
	}
	if x32Bit != 0 {
		// x32 numbers are [x32Bit, 2^31); above is a negative number,
		// which the kernel answers with ENOSYS.
		prog = append(prog,
			insn{code: bpfJge, k: x32Bit, jf: "native"},
			insn{code: bpfJge, k: 0x80000000, jt: "allow", jf: "kill"},
		)
	}
	prog = append(prog,
		insn{label: "native", code: bpfJeq, k: nrExecve, jt: "notify"},
		insn{code: bpfJeq, k: nrExecveat, jt: "notify"},
		insn{code: bpfJeq, k: nrConnect, jt: "notify"},
		insn{code: bpfJeq, k: nrIoctl, jt: "ioctl"},
		insn{code: bpfJeq, k: nrIoUringSetup, jt: "eperm"},
		insn{code: bpfJeq, k: nrMknodat, jt: "mknodat"},
		insn{code: bpfJeq, k: nrChroot, jt: "eperm"},
		insn{code: bpfJeq, k: nrSetns, jt: "setns"},
	)
	if nrMknod != none {
		prog = append(prog, insn{code: bpfJeq, k: nrMknod, jt: "mknod"})
	}
	if meta {
		for _, m := range metaCalls {
			prog = append(prog, insn{code: bpfJeq, k: m.nr, jt: "notify"})
		}
	}
	prog = append(prog,
		insn{code: bpfJeq, k: nrSeccomp, jt: "seccomp", jf: "allow"},

		insn{label: "foreign", code: bpfJeq, k: compatArch, jf: "kill"},
		insn{code: bpfLdAbs, k: offNr},
		insn{code: bpfJeq, k: compatExecve, jt: "eperm"},
		insn{code: bpfJeq, k: compatExecveat, jt: "eperm"},
		insn{code: bpfJeq, k: compatIoctl, jt: "compat-ioctl"},
	)
	for _, nr := range compatRefused {
		prog = append(prog, insn{code: bpfJeq, k: nr, jt: "eperm"})
	}
	prog = append(prog,
		insn{code: bpfJeq, k: compatSeccomp, jf: "allow"},

		insn{label: "seccomp", code: bpfLdAbs, k: offArg1Low},
		insn{code: bpfJset, k: unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, jt: "eperm", jf: "allow"},

		// mknod's mode is args[1], mknodat's args[2]: a device's type
		// is refused.
	)
	prog = append(prog,
		// setns's nstype is args[1]: 0 (any) may be a mount namespace.
		insn{label: "setns", code: bpfLdAbs, k: offArg1Low},
		insn{code: bpfJeq, k: 0, jt: "eperm"},
		insn{code: bpfAnd, k: ^uint32(setnsAllowed)},
		insn{code: bpfJeq, k: 0, jt: "allow", jf: "eperm"},
	)
	for _, m := range []struct {
		label string
		off   uint32
	}{{"mknod", offArg1Low}, {"mknodat", offArg2Low}} {
		prog = append(prog,
			insn{label: m.label, code: bpfLdAbs, k: m.off},
			insn{code: bpfAnd, k: sIFMT},
			insn{code: bpfJeq, k: sIFCHR, jt: "eperm"},
			insn{code: bpfJeq, k: sIFBLK, jt: "eperm", jf: "allow"},
		)
	}
	// ioctl's request is an unsigned int: the low half of args[1].
	ioctl := func(label, fs string) {
		prog = append(prog,
			insn{label: label, code: bpfLdAbs, k: offArg1Low},
			insn{code: bpfJeq, k: tiocsti, jt: "eperm"},
			insn{code: bpfJeq, k: tioclinux, jt: "eperm"},
		)
		if fs == "" {
			prog[len(prog)-1].jf = "allow"
			return
		}
		for _, r := range fsIoctlReads {
			prog = append(prog, insn{code: bpfJeq, k: r, jt: "allow"})
		}
		prog = append(prog, insn{code: bpfRsh, k: 8}, insn{code: bpfAnd, k: 0xff})
		for i, ty := range fsIoctlTypes {
			in := insn{code: bpfJeq, k: ty, jt: fs}
			if i == len(fsIoctlTypes)-1 {
				in.jf = "allow"
			}
			prog = append(prog, in)
		}
	}
	if meta {
		ioctl("ioctl", "notify")
	} else {
		ioctl("ioctl", "")
	}
	ioctl("compat-ioctl", "eperm")
	prog = append(prog,
		insn{label: "notify", code: bpfRet, k: unix.SECCOMP_RET_USER_NOTIF},
		insn{label: "eperm", code: bpfRet, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		insn{label: "allow", code: bpfRet, k: unix.SECCOMP_RET_ALLOW},
		insn{label: "kill", code: bpfRet, k: unix.SECCOMP_RET_KILL_PROCESS},
	)
	return prog
}

// newFilter assembles the seccomp filter for the program's process to
// install on itself (in spawnChild, with SECCOMP_FILTER_FLAG_NEW_LISTENER);
// meta sends the metadata calls to the supervisor. The program points to
// its instructions: keep it until the child has used it.
func newFilter(meta bool) (*unix.SockFprog, error) {
	insns, err := assemble(filterProgram(meta))
	if err != nil {
		return nil, err
	}
	return &unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}, nil
}
