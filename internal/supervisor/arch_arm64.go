//go:build linux

package supervisor

// The system calls the filter watches, for arm64 and for the 32-bit ARM
// compatibility mode. arm64 has no x32-like numbering.
const (
	auditArch      = 0xc00000b7 // AUDIT_ARCH_AARCH64
	nrExecve       = 221
	nrExecveat     = 281
	nrSeccomp      = 277
	nrIoctl        = 29
	nrConnect      = 203
	nrIoUringSetup = 425
	nrChroot       = 51
	nrSetns        = 268
	nrOpenat2      = 437
	nrMknod        = none // only mknodat
	nrMknodat      = 33
	x32Bit         = 0
	compatArch     = 0x40000028 // AUDIT_ARCH_ARM
	compatExecve   = 11
	compatExecveat = 387
	compatSeccomp  = 383
	compatIoctl    = 54
)

// The metadata calls of arm64 (the generic table: only the *at forms).
var metaCalls = []metaCall{
	{nr: 52, name: "fchmod", fd: true},
	{nr: 53, name: "fchmodat", path: 1, dirfd: 0},
	{nr: 54, name: "fchownat", path: 1, dirfd: 0, flags: 4},
	{nr: 55, name: "fchown", fd: true},
	{nr: 88, name: "utimensat", path: 1, dirfd: 0, flags: 3, nullIsFd: true},
	{nr: 452, name: "fchmodat2", path: 1, dirfd: 0, flags: 3},
	{nr: 5, name: "setxattr", path: 0, dirfd: -1},
	{nr: 6, name: "lsetxattr", path: 0, dirfd: -1, nofollow: true},
	{nr: 7, name: "fsetxattr", fd: true},
	{nr: 14, name: "removexattr", path: 0, dirfd: -1},
	{nr: 15, name: "lremovexattr", path: 0, dirfd: -1, nofollow: true},
	{nr: 16, name: "fremovexattr", fd: true},
	{nr: 463, name: "setxattrat", path: 1, dirfd: 0, flags: 2},
	{nr: 466, name: "removexattrat", path: 1, dirfd: 0, flags: 2},
}

// compatRefused are the 32-bit ARM calls refused outright: the metadata
// calls, connect, io_uring, mknod,
// chroot and setns.
var compatRefused = []uint32{
	15, 16, 94, 95, 182, 198, 207, 212, // chmod lchown fchmod fchown chown lchown32 fchown32 chown32
	269, 333, 348, 325, 326, 452, // utimes futimesat utimensat fchownat fchmodat fchmodat2
	226, 227, 228, 235, 236, 237, 463, 466, // *setxattr *removexattr *xattrat
	283, 425, // connect io_uring_setup
	14, 324, // mknod mknodat
	61, 375, // chroot setns
}
