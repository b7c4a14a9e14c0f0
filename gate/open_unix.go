//go:build unix

package gate

import (
	"io/fs"
	"os"
	"syscall"
)

// openRead opens path for reading as os.Open does, but without the
// runtime's poller: a hook process reads a few small regular files and
// never waits on one, and setting up the poller for the first of them
// costs it more than reading them. It opens without blocking: a FIFO
// planted where a file should be is opened at once (and then refused as
// not a regular file by the caller), never waited on.
func openRead(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}
