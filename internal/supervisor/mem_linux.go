//go:build linux && (amd64 || arm64)

package supervisor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// mem reads a process's memory (/proc/<pid>/mem) a page at a time, and
// keeps the pages it read: the strings of an argv and an environment lie
// mostly on a few pages, read once each.
type mem struct {
	fd    int
	pages map[uint64][]byte
	reads int // preads made, for the cost benchmark
}

const pageSize = 4096

func newMem(fd int) *mem { return &mem{fd: fd, pages: map[uint64][]byte{}} }

// page returns the bytes from addr to the end of its page.
func (m *mem) page(addr uint64) ([]byte, error) {
	base := addr &^ (pageSize - 1)
	p, ok := m.pages[base]
	if !ok {
		p = make([]byte, pageSize)
		m.reads++
		n, err := unix.Pread(m.fd, p, int64(base))
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errors.New("unreadable memory")
		}
		p = p[:n]
		m.pages[base] = p
	}
	off := addr - base
	if off >= uint64(len(p)) {
		return nil, errors.New("unreadable memory")
	}
	return p[off:], nil
}

// bytes reads n bytes at addr.
func (m *mem) bytes(addr uint64, n int) ([]byte, error) {
	out := make([]byte, 0, n)
	for len(out) < n {
		p, err := m.page(addr)
		if err != nil {
			return nil, err
		}
		p = p[:min(len(p), n-len(out))]
		out = append(out, p...)
		addr += uint64(len(p))
	}
	return out, nil
}

// string reads a NUL-terminated string at addr.
func (m *mem) string(addr uint64) (string, error) {
	if addr == 0 {
		return "", errors.New("a null pointer")
	}
	var out []byte
	for len(out) < maxStrlen {
		p, err := m.page(addr)
		if err != nil {
			return "", err
		}
		if i := bytes.IndexByte(p, 0); i >= 0 {
			return string(append(out, p[:i]...)), nil
		}
		out = append(out, p...)
		addr += uint64(len(p))
	}
	return "", errors.New("a string too long to check")
}

// strings reads a NULL-terminated array of string pointers (an argv or an
// environment); keep, when not nil, says which strings to keep (the
// others are read and checked for length only).
func (m *mem) strings(addr uint64, keep func(string) bool) ([]string, error) {
	if addr == 0 {
		return nil, nil // Linux runs the program with an empty argv
	}
	var out []string
	total := 0
	for i := 0; ; i++ {
		if i == maxArgs {
			return nil, errors.New("too many arguments to check")
		}
		b, err := m.bytes(addr+uint64(8*i), 8)
		if err != nil {
			return nil, fmt.Errorf("reading the arguments: %w", err)
		}
		p := binary.LittleEndian.Uint64(b)
		if p == 0 {
			return out, nil
		}
		s, err := m.string(p)
		if err != nil {
			return nil, fmt.Errorf("reading argument %d: %w", i, err)
		}
		if total += len(s) + 1; total > maxArgBytes {
			return nil, errors.New("arguments too long to check")
		}
		if keep == nil || keep(s) {
			out = append(out, s)
		}
	}
}
