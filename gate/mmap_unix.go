//go:build unix

package gate

import (
	"errors"
	"os"
	"syscall"
)

// mapFile maps the file at path read-only: reading a large compact copy
// costs only the pages a decision touches. unmap releases the mapping;
// nothing may use data after it.
func mapFile(path string) (data []byte, unmap func([]byte), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() || size <= 0 || size > 1<<31 {
		return nil, nil, errors.New("compact policy: not a regular file of a usable size")
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func(b []byte) { syscall.Munmap(b) }, nil
}
