//go:build linux

#include "textflag.h"

// func rawSpawn(stack uintptr, a *spawnArgs) (pid, errno uintptr)
//
// The child runs on stack with R12 = a and makes raw system calls only:
// it shares the parent's memory, not its thread (no g, no m of its own).
// spawnArgs: path 0, argv 8, env 16, dir 24, fds 32/36/40, errPipe 44,
// mask 48.
TEXT ·rawSpawn(SB),NOSPLIT,$0-32
	MOVQ	a+8(FP), R12
	MOVQ	$0x111, DI	// CLONE_VM | SIGCHLD
	MOVQ	stack+0(FP), SI
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	MOVL	$56, AX	// clone
	SYSCALL
	TESTQ	AX, AX
	JZ	child
	CMPQ	AX, $0xfffffffffffff001
	JLS	parent
	NEGQ	AX
	MOVQ	$0, pid+16(FP)
	MOVQ	AX, errno+24(FP)
	RET
parent:
	MOVQ	AX, pid+16(FP)
	MOVQ	$0, errno+24(FP)
	RET

child:
	// 0(SP): a struct sigaction read back; 32(SP): SIG_DFL's, zero.
	SUBQ	$64, SP
	MOVQ	$0, 32(SP)
	MOVQ	$0, 40(SP)
	MOVQ	$0, 48(SP)
	MOVQ	$0, 56(SP)

	MOVLQSX	32(R12), DI
	MOVQ	$0, SI
	XORQ	DX, DX
	MOVL	$292, AX	// dup3
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JHI	fail
	MOVLQSX	36(R12), DI
	MOVQ	$1, SI
	XORQ	DX, DX
	MOVL	$292, AX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JHI	fail
	MOVLQSX	40(R12), DI
	MOVQ	$2, SI
	XORQ	DX, DX
	MOVL	$292, AX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JHI	fail

	MOVQ	24(R12), DI
	TESTQ	DI, DI
	JZ	signals
	MOVL	$80, AX	// chdir
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JHI	fail

signals:
	// Every signal with a handler gets its default action back; ignored
	// ones stay ignored, as across execve.
	MOVQ	$1, R13
sigloop:
	MOVQ	R13, DI
	XORQ	SI, SI
	MOVQ	SP, DX
	MOVQ	$8, R10
	MOVL	$13, AX	// rt_sigaction(sig, NULL, &old, 8)
	SYSCALL
	TESTQ	AX, AX
	JNZ	signext	// SIGKILL, SIGSTOP
	MOVQ	0(SP), AX
	CMPQ	AX, $1	// SIG_DFL 0, SIG_IGN 1
	JLS	signext
	MOVQ	R13, DI
	LEAQ	32(SP), SI
	XORQ	DX, DX
	MOVQ	$8, R10
	MOVL	$13, AX	// rt_sigaction(sig, &dfl, NULL, 8)
	SYSCALL
signext:
	INCQ	R13
	CMPQ	R13, $65
	JNE	sigloop

	// Every fd above 2 close-on-exec: the program gets 0, 1 and 2 only,
	// whatever this process inherited.
	MOVQ	$3, DI
	MOVL	$0xffffffff, SI
	MOVQ	$4, DX	// CLOSE_RANGE_CLOEXEC
	MOVL	$436, AX	// close_range
	SYSCALL

	MOVQ	$2, DI	// SIG_SETMASK
	LEAQ	48(R12), SI
	XORQ	DX, DX
	MOVQ	$8, R10
	MOVL	$14, AX	// rt_sigprocmask
	SYSCALL

	MOVQ	0(R12), DI
	MOVQ	8(R12), SI
	MOVQ	16(R12), DX
	MOVL	$59, AX	// execve
	SYSCALL

fail:
	NEGQ	AX
	MOVL	AX, 0(SP)
	MOVLQSX	44(R12), DI
	MOVQ	SP, SI
	MOVQ	$4, DX
	MOVL	$1, AX	// write
	SYSCALL
exit:
	MOVQ	$127, DI
	MOVL	$231, AX	// exit_group
	SYSCALL
	JMP	exit
