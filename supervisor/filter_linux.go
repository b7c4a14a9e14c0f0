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
	offNr      = 0  // seccomp_data.nr
	offArch    = 4  // seccomp_data.arch
	offArg1Low = 24 // seccomp_data.args[1], low half (little-endian)
)

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

// filterProgram is the seccomp filter of the tree: execve and execveat
// go to the supervisor; a new seccomp listener is refused (the first
// listener on an execve would see it instead of the supervisor, once the
// supervisor is gone); the compatibility mode may not exec at all; any
// other architecture, and x32, kills the process.
func filterProgram() []insn {
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
		insn{code: bpfJeq, k: nrSeccomp, jt: "seccomp", jf: "allow"},

		insn{label: "foreign", code: bpfJeq, k: compatArch, jf: "kill"},
		insn{code: bpfLdAbs, k: offNr},
		insn{code: bpfJeq, k: compatExecve, jt: "eperm"},
		insn{code: bpfJeq, k: compatExecveat, jt: "eperm"},
		insn{code: bpfJeq, k: compatSeccomp, jf: "allow"},

		insn{label: "seccomp", code: bpfLdAbs, k: offArg1Low},
		insn{code: bpfJset, k: unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, jt: "eperm", jf: "allow"},

		insn{label: "notify", code: bpfRet, k: unix.SECCOMP_RET_USER_NOTIF},
		insn{label: "eperm", code: bpfRet, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		insn{label: "allow", code: bpfRet, k: unix.SECCOMP_RET_ALLOW},
		insn{label: "kill", code: bpfRet, k: unix.SECCOMP_RET_KILL_PROCESS},
	)
	return prog
}
