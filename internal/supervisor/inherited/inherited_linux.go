//go:build linux && (amd64 || arm64)

package inherited

import "unsafe"

// rawSyscall6 is syscall.RawSyscall6, which syscall exports by link name
// for golang.org/x/sys; importing syscall would initialize it first.
//
//go:linkname rawSyscall6 syscall.RawSyscall6
func rawSyscall6(trap, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2, errno uintptr)

const (
	rlimitNofile = 7
	atFdcwd      = -100
	oRdonly      = 0
	oDirectory   = 0o200000
	oCloexec     = 0o2000000
	fGetfd       = 1
	fdCloexec    = 1
)

func init() {
	var lim Limit
	if _, _, e := rawSyscall6(sysPrlimit64, 0, rlimitNofile, 0, uintptr(unsafe.Pointer(&lim)), 0, 0); e == 0 {
		nofile, nofileOK = lim, true
	}
}

// scanFiles lists the descriptors above 2 open and not close-on-exec,
// from /proc/self/fd.
func scanFiles() ([]File, bool) {
	path := [...]byte{'/', 'p', 'r', 'o', 'c', '/', 's', 'e', 'l', 'f', '/', 'f', 'd', 0}
	dir, _, e := rawSyscall6(sysOpenat, uintptr(atFdcwd&(1<<64-1)), uintptr(unsafe.Pointer(&path[0])), oRdonly|oDirectory|oCloexec, 0, 0, 0)
	if e != 0 {
		return nil, false
	}
	defer rawSyscall6(sysClose, dir, 0, 0, 0, 0, 0)
	var out []File
	var buf [4096]byte
	for {
		n, _, e := rawSyscall6(sysGetdents64, dir, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		if e != 0 {
			return nil, false
		}
		if n == 0 {
			break
		}
		// struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name.
		for off := uintptr(0); off+19 < n; {
			reclen := uintptr(buf[off+16]) | uintptr(buf[off+17])<<8
			if reclen == 0 || off+reclen > n {
				return nil, false
			}
			fd, ok := atoi(buf[off+19 : off+reclen])
			off += reclen
			if !ok || fd <= 2 || uintptr(fd) == dir {
				continue
			}
			flags, _, e := rawSyscall6(sysFcntl, uintptr(fd), fGetfd, 0, 0, 0, 0)
			if e != 0 || flags&fdCloexec != 0 {
				continue
			}
			var st stat
			if _, _, e := rawSyscall6(sysFstat, uintptr(fd), uintptr(unsafe.Pointer(&st)), 0, 0, 0, 0); e != 0 {
				continue
			}
			out = append(out, File{Fd: fd, Dev: st.Dev, Ino: st.Ino})
		}
	}
	// getdents lists /proc/self/fd in increasing order; keep it so anyway.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Fd < out[j-1].Fd; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, true
}

// atoi reads a NUL-terminated decimal number.
func atoi(b []byte) (int, bool) {
	n, digits := 0, 0
	for _, c := range b {
		if c == 0 {
			break
		}
		if c < '0' || c > '9' || n > 1<<30 {
			return 0, false
		}
		n = n*10 + int(c-'0')
		digits++
	}
	return n, digits > 0
}
