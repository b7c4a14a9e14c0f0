//go:build linux

package supervisor

import (
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// statKeyOf returns fi's statKey; false when fi has none.
func statKeyOf(fi fs.FileInfo) (statKey, bool) {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statKey{}, false
	}
	return statKey{dev: uint64(sys.Dev), ino: uint64(sys.Ino),
		mtime: time.Unix(sys.Mtim.Unix()), ctime: time.Unix(sys.Ctim.Unix())}, true
}

// readFile reads the regular file p of the size Lstat gave: a raw open,
// not followed if it became a link, not waiting if it became a FIFO,
// without the runtime poller's registration that os.ReadFile makes.
func readFile(p string, size int64) ([]byte, error) {
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: p, Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) == size && len(buf) < cap(buf) {
			// All Lstat said, and short of what was asked: the end. A
			// file that grew since reads on.
			return buf, nil
		}
	}
}

// clockSettable reports whether this process, and so the tree it starts,
// may set the system clock (CAP_SYS_TIME permitted), or cannot tell.
var clockSettable = func() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return true
	}
	return data[unix.CAP_SYS_TIME/32].Permitted&(1<<(unix.CAP_SYS_TIME%32)) != 0
}
