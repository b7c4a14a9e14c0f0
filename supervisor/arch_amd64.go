//go:build linux

package supervisor

// The system calls the filter watches, for x86-64 and for the i386
// compatibility mode a 64-bit process can still call (int 0x80). x32 calls
// (numbers with bit 30 set) are killed: they would be another way in.
const (
	auditArch      = 0xc000003e // AUDIT_ARCH_X86_64
	nrExecve       = 59
	nrExecveat     = 322
	nrSeccomp      = 317
	x32Bit         = 0x40000000
	compatArch     = 0x40000003 // AUDIT_ARCH_I386
	compatExecve   = 11
	compatExecveat = 358
	compatSeccomp  = 354
)
