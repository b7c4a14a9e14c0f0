//go:build linux

package supervisor

// The system calls the filter watches, for arm64 and for the 32-bit ARM
// compatibility mode. arm64 has no x32-like numbering.
const (
	auditArch      = 0xc00000b7 // AUDIT_ARCH_AARCH64
	nrExecve       = 221
	nrExecveat     = 281
	nrSeccomp      = 277
	x32Bit         = 0
	compatArch     = 0x40000028 // AUDIT_ARCH_ARM
	compatExecve   = 11
	compatExecveat = 387
	compatSeccomp  = 383
)
