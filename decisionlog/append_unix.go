//go:build unix

package decisionlog

import (
	"os"
	"syscall"
)

// openLog opens the log for appending, creating it owner-only. It never
// follows a link (the log is a protected path; a link planted there would
// send lines elsewhere) and never waits on a FIFO.
func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
}

// writeOnce is exactly one write(2): os.File.Write would write the rest of
// a short write with a second call, which another agent's line could come
// between.
func writeOnce(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), b)
			if werr != syscall.EINTR {
				return true
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if n < 0 {
		n = 0
	}
	return n, werr
}
