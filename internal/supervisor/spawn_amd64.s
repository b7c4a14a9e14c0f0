//go:build linux

#include "textflag.h"

// func rawSpawn(stack uintptr, a *spawnArgs, fn uintptr, flags uintptr) (pid, errno uintptr)
//
// The trampoline of spawn: a clone sharing this process's memory, whose
// child switches to stack and calls fn(a) (spawnChild), which never
// returns, in Go's register convention: a in AX, X15 zero, and R14 still
// the caller's g, which it never reads.
TEXT ·rawSpawn(SB),NOSPLIT,$0-48
	MOVQ	a+8(FP), R12
	MOVQ	fn+16(FP), R13
	MOVQ	flags+24(FP), DI
	ORQ	$0x111, DI	// CLONE_VM | SIGCHLD, and the namespaces
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
	MOVQ	$0, pid+32(FP)
	MOVQ	AX, errno+40(FP)
	RET
parent:
	MOVQ	AX, pid+32(FP)
	MOVQ	$0, errno+40(FP)
	RET
child:
	// SP is the top of stack: room for the callee to spill its
	// argument, then the call.
	SUBQ	$16, SP
	MOVQ	R12, AX
	XORPS	X15, X15
	CALL	R13
exit:
	MOVQ	$127, DI
	MOVL	$231, AX	// exit_group
	SYSCALL
	JMP	exit
