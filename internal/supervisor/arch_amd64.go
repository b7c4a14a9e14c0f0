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
	nrIoctl        = 16
	nrConnect      = 42
	nrIoUringSetup = 425
	nrChroot       = 161
	nrSetns        = 308
	nrOpenat2      = 437
	nrMknod        = 133
	nrMknodat      = 259
	x32Bit         = 0x40000000
	compatArch     = 0x40000003 // AUDIT_ARCH_I386
	compatExecve   = 11
	compatExecveat = 358
	compatSeccomp  = 354
	compatIoctl    = 54
)

// The metadata calls of x86-64: a path (or a descriptor) whose mode,
// owner, times or extended attributes change.
var metaCalls = []metaCall{
	{nr: 90, name: "chmod", path: 0, dirfd: -1},
	{nr: 91, name: "fchmod", fd: true},
	{nr: 92, name: "chown", path: 0, dirfd: -1},
	{nr: 93, name: "fchown", fd: true},
	{nr: 94, name: "lchown", path: 0, dirfd: -1, nofollow: true},
	{nr: 132, name: "utime", path: 0, dirfd: -1},
	{nr: 235, name: "utimes", path: 0, dirfd: -1},
	{nr: 261, name: "futimesat", path: 1, dirfd: 0, nullIsFd: true},
	{nr: 280, name: "utimensat", path: 1, dirfd: 0, flags: 3, nullIsFd: true},
	{nr: 260, name: "fchownat", path: 1, dirfd: 0, flags: 4},
	{nr: 268, name: "fchmodat", path: 1, dirfd: 0},
	{nr: 452, name: "fchmodat2", path: 1, dirfd: 0, flags: 3},
	{nr: 188, name: "setxattr", path: 0, dirfd: -1},
	{nr: 189, name: "lsetxattr", path: 0, dirfd: -1, nofollow: true},
	{nr: 190, name: "fsetxattr", fd: true},
	{nr: 197, name: "removexattr", path: 0, dirfd: -1},
	{nr: 198, name: "lremovexattr", path: 0, dirfd: -1, nofollow: true},
	{nr: 199, name: "fremovexattr", fd: true},
	{nr: 463, name: "setxattrat", path: 1, dirfd: 0, flags: 2},
	{nr: 466, name: "removexattrat", path: 1, dirfd: 0, flags: 2},
}

// compatRefused are the i386 calls refused outright: the metadata calls
// (16- and 32-bit ids), socketcall and connect, io_uring, mknod,
// chroot and setns. A 32-bit
// program has no business with them under the supervisor, and reading
// their arguments would need a second decoder.
var compatRefused = []uint32{
	15, 16, 94, 95, 182, 198, 207, 212, // chmod lchown fchmod fchown chown lchown32 fchown32 chown32
	30, 271, 299, 320, 298, 306, 452, // utime utimes futimesat utimensat fchownat fchmodat fchmodat2
	226, 227, 228, 235, 236, 237, 463, 466, // *setxattr *removexattr *xattrat
	102, 362, 425, // socketcall connect io_uring_setup
	14, 297, // mknod mknodat
	61, 346, // chroot setns
}
