//go:build linux && (amd64 || arm64)

package supervisor

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system calls of an answer are made raw, without telling the Go
// scheduler: they are short and never wait for the tree (/proc links, a
// stat, a read of a file's first bytes, another process's memory, the
// listener's ioctls). Entering the scheduler's system call state wakes
// its monitor thread when it sleeps, which it does whenever the loop
// waits: one wake-up per execution, as costly as the rest of the answer.

var atFdcwd = unix.AT_FDCWD // a variable: -100 is no uintptr constant

func rawErr(errno syscall.Errno) error {
	if errno == 0 {
		return nil
	}
	return errno
}

// rawIoctl is an ioctl of the listener.
func rawIoctl(fd int, req uintptr, arg unsafe.Pointer) syscall.Errno {
	_, _, errno := syscall.RawSyscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	return errno
}

// rawReadlink reads the link at path into buf, returning its target; a
// target that fills buf is an error (ENAMETOOLONG), not a cut one.
func rawReadlink(path string, buf []byte) (string, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return "", err
	}
	n, _, errno := syscall.RawSyscall6(unix.SYS_READLINKAT, uintptr(atFdcwd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if errno != 0 {
		return "", &os.PathError{Op: "readlink", Path: path, Err: errno}
	}
	if int(n) >= len(buf) {
		return "", &os.PathError{Op: "readlink", Path: path, Err: unix.ENAMETOOLONG}
	}
	return string(buf[:n]), nil
}

// readlink is rawReadlink with a buffer of PATH_MAX.
func readlink(path string) (string, error) {
	var buf [unix.PathMax + 1]byte
	return rawReadlink(path, buf[:])
}

// rawStat stats path (the last link followed when follow).
func rawStat(path string, st *unix.Stat_t, follow bool) error {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	flags := 0
	if !follow {
		flags = unix.AT_SYMLINK_NOFOLLOW
	}
	_, _, errno := syscall.RawSyscall6(unix.SYS_NEWFSTATAT, uintptr(atFdcwd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	return rawErr(errno)
}

// rawOpen opens path read-only, never blocking (a FIFO, a device).
func rawOpen(path string) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fd, _, errno := syscall.RawSyscall6(unix.SYS_OPENAT, uintptr(atFdcwd), uintptr(unsafe.Pointer(p)),
		uintptr(unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY), 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// rawOpenat2 opens path (from the working directory) with openat2's
// flags and resolve flags.
func rawOpenat2(path string, flags uint64, resolve uint64) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	how := unix.OpenHow{Flags: flags, Resolve: resolve}
	fd, _, errno := syscall.RawSyscall6(unix.SYS_OPENAT2, uintptr(atFdcwd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

func rawFstat(fd int, st *unix.Stat_t) error {
	_, _, errno := syscall.RawSyscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	return rawErr(errno)
}

func rawRead(fd int, buf []byte) int {
	n, _, errno := syscall.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if errno != 0 {
		return 0
	}
	return int(n)
}

func rawClose(fd int) { syscall.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0) }
