//go:build linux && (amd64 || arm64)

package supervisor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mem reads the memory of the process that made a notification with
// process_vm_readv, whole pages at a time and as many pages as are known
// to be needed in one call; it keeps the pages it read and the bytes the
// reading used (spans), so that same tells with one more call whether
// those bytes are still what they were. One mem serves the loop's
// notifications in turn (reset), its buffers reused: reading an
// execution allocates only the strings it keeps.
//
// process_vm_readv names the process by pid on every call; a reading is
// the process's only if the notification is still valid after it (a
// process waiting for its answer is alive, so its pid names it).
type mem struct {
	pid   int
	pages []memPage      // in the order read
	at    map[uint64]int // base -> index in pages
	spans []span         // the bytes read, for same
	free  [][]byte       // page buffers to reuse
	reads int            // system calls made, for the tests

	local, remote []iovec  // process_vm_readv's vectors
	ptrs          []uint64 // strings' pointer array, reused
	bases         []uint64 // same's pages, reused
	bufs, kept    [][]byte // same's buffers, reused
	pos           []int    // same's index of m.pages in bufs
}

// iovec is struct iovec, its base an address (remote: not of this
// process).
type iovec struct{ base, len uint64 }

type memPage struct {
	base uint64
	b    []byte // nil when the page cannot be read
}

type span struct {
	addr uint64
	n    int
}

const pageSize = 4096

// maxIov bounds the pages read by one call (the kernel's UIO_MAXIOV).
const maxIov = 1024

var errUnreadable = errors.New("unreadable memory")

func newMem() *mem { return &mem{at: map[uint64]int{}} }

// reset starts the reading of process pid's memory anew.
func (m *mem) reset(pid int) {
	for _, p := range m.pages {
		if p.b != nil {
			m.free = append(m.free, p.b[:pageSize])
		}
	}
	m.pid, m.pages, m.spans = pid, m.pages[:0], m.spans[:0]
	clear(m.at)
}

func (m *mem) buf() []byte {
	if n := len(m.free); n > 0 {
		b := m.free[n-1]
		m.free = m.free[:n-1]
		return b
	}
	return make([]byte, pageSize)
}

// readPages reads the pages at bases (page-aligned) into bufs, in as few
// calls as it can: a call stops at the first page it cannot read, which
// is left nil, and the next call starts after it.
func (m *mem) readPages(bases []uint64, bufs [][]byte) {
	for len(bases) > 0 {
		k := min(len(bases), maxIov)
		if len(m.local) < k {
			m.local, m.remote = make([]iovec, k), make([]iovec, k)
		}
		local, remote := m.local, m.remote
		for i := range k {
			local[i] = iovec{uint64(uintptr(unsafe.Pointer(&bufs[i][0]))), pageSize}
			remote[i] = iovec{bases[i], pageSize}
		}
		m.reads++
		n, _, errno := syscall.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(m.pid),
			uintptr(unsafe.Pointer(&local[0])), uintptr(k), uintptr(unsafe.Pointer(&remote[0])), uintptr(k), 0)
		runtime.KeepAlive(bufs)
		done := int(n) / pageSize
		if errno != 0 {
			done = 0
		}
		if done < k {
			bufs[done] = nil // the page the call stopped at
			done++
		}
		bases, bufs = bases[done:], bufs[done:]
	}
}

// fetch reads the pages at bases that were not read yet.
func (m *mem) fetch(bases ...uint64) {
	var wantA [8]uint64
	want := wantA[:0]
	for _, b := range bases {
		if _, ok := m.at[b]; !ok && !containsBase(want, b) {
			want = append(want, b)
		}
	}
	if len(want) == 0 {
		return
	}
	var bufsA, keptA [8][]byte
	bufs, kept := bufsA[:0], keptA[:0]
	for range want {
		b := m.buf()
		bufs, kept = append(bufs, b), append(kept, b)
	}
	m.readPages(want, bufs)
	for i, b := range want {
		if bufs[i] == nil {
			m.free = append(m.free, kept[i])
		}
		m.at[b] = len(m.pages)
		m.pages = append(m.pages, memPage{base: b, b: bufs[i]})
	}
}

func containsBase(bs []uint64, b uint64) bool {
	for _, x := range bs {
		if x == b {
			return true
		}
	}
	return false
}

// page returns the bytes from addr to the end of its page.
func (m *mem) page(addr uint64) ([]byte, error) {
	base := addr &^ (pageSize - 1)
	i, ok := m.at[base]
	if !ok {
		m.fetch(base)
		i = m.at[base]
	}
	p := m.pages[i].b
	if p == nil {
		return nil, errUnreadable
	}
	return p[addr-base:], nil
}

// word reads the 8-byte little-endian word at addr.
func (m *mem) word(addr uint64) (uint64, error) {
	var w [8]byte
	got := 0
	for got < 8 {
		p, err := m.page(addr + uint64(got))
		if err != nil {
			return 0, err
		}
		got += copy(w[got:], p)
	}
	return binary.LittleEndian.Uint64(w[:]), nil
}

// strlen measures the NUL-terminated string at addr and records it.
func (m *mem) strlen(addr uint64) (int, error) {
	if addr == 0 {
		return 0, errors.New("a null pointer")
	}
	n := 0
	for n < maxStrlen {
		p, err := m.page(addr + uint64(n))
		if err != nil {
			return 0, err
		}
		if i := bytes.IndexByte(p, 0); i >= 0 {
			n += i
			m.spans = append(m.spans, span{addr, n + 1})
			return n, nil
		}
		n += len(p)
	}
	return 0, errors.New("a string too long to check")
}

// text copies the n bytes at addr (read before) into a string.
func (m *mem) text(addr uint64, n int) string {
	if p, _ := m.page(addr); len(p) >= n {
		return string(p[:n])
	}
	out := make([]byte, 0, n)
	for len(out) < n {
		p, _ := m.page(addr + uint64(len(out)))
		out = append(out, p[:min(len(p), n-len(out))]...)
	}
	return string(out)
}

// view is the n bytes at addr (read before) as a string that lives as
// long as the reading (until reset): no copy when they lie on one page.
func (m *mem) view(addr uint64, n int) string {
	if n == 0 {
		return ""
	}
	if p, _ := m.page(addr); len(p) >= n {
		return unsafe.String(&p[0], n)
	}
	return m.text(addr, n)
}

// bytes reads n bytes at addr.
func (m *mem) bytes(addr uint64, n int) ([]byte, error) {
	out := make([]byte, 0, n)
	for len(out) < n {
		p, err := m.page(addr + uint64(len(out)))
		if err != nil {
			return nil, err
		}
		out = append(out, p[:min(len(p), n-len(out))]...)
	}
	m.spans = append(m.spans, span{addr, n})
	return out, nil
}

// string reads a NUL-terminated string at addr.
func (m *mem) string(addr uint64) (string, error) {
	n, err := m.strlen(addr)
	if err != nil {
		return "", err
	}
	return m.text(addr, n), nil
}

// strings reads a NULL-terminated array of string pointers (an argv or an
// environment); keep, when not nil, says which strings to keep (the
// others are read and checked for length only).
func (m *mem) strings(addr uint64, keep func(string) bool) ([]string, error) {
	ptrs, err := m.pointers(addr, nil)
	if err != nil {
		return nil, err
	}
	m.fetchStrings(ptrs)
	return m.texts(ptrs, keep, "argument")
}

// argvEnv reads an argv and an environment as strings does, the pages of
// all their strings in one call; keepEnv says which variables to keep.
func (m *mem) argvEnv(argv, env uint64, keepEnv func(string) bool) ([]string, []string, error) {
	ptrs, err := m.pointers(argv, m.ptrs[:0])
	if err != nil {
		return nil, nil, err
	}
	nArgv := len(ptrs)
	if ptrs, err = m.pointers(env, ptrs); err != nil {
		return nil, nil, fmt.Errorf("reading the environment: %w", err)
	}
	m.ptrs = ptrs[:0]
	m.fetchStrings(ptrs)
	a, err := m.texts(ptrs[:nArgv], nil, "argument")
	if err != nil {
		return nil, nil, err
	}
	e, err := m.texts(ptrs[nArgv:], keepEnv, "variable")
	if err != nil {
		return nil, nil, fmt.Errorf("reading the environment: %w", err)
	}
	return a, e, nil
}

// pointers appends to ptrs the pointers of the NULL-terminated array at
// addr (none for a null array: Linux runs the program with an empty
// argv).
func (m *mem) pointers(addr uint64, ptrs []uint64) ([]uint64, error) {
	if addr == 0 {
		return ptrs, nil
	}
	start := len(ptrs)
	for i := 0; ; i++ {
		if i == maxArgs {
			return nil, errors.New("too many arguments to check")
		}
		p, err := m.word(addr + uint64(8*i))
		if err != nil {
			return nil, fmt.Errorf("reading the arguments: %w", err)
		}
		if p == 0 {
			break
		}
		ptrs = append(ptrs, p)
	}
	m.spans = append(m.spans, span{addr, 8 * (len(ptrs) - start + 1)})
	return ptrs, nil
}

// fetchStrings reads the pages the strings at ptrs start on, in one call.
func (m *mem) fetchStrings(ptrs []uint64) {
	bases := m.bases[:0]
	for _, p := range ptrs {
		if b := p &^ (pageSize - 1); !containsBase(bases, b) && len(bases) < maxIov {
			bases = append(bases, b)
		}
	}
	m.bases = bases[:0]
	m.fetch(bases...)
}

// texts reads the strings at ptrs (what names one in errors); keep, when
// not nil, says which to keep.
func (m *mem) texts(ptrs []uint64, keep func(string) bool, what string) ([]string, error) {
	var out []string
	total := 0
	for i, p := range ptrs {
		n, err := m.strlen(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s %d: %w", what, i, err)
		}
		if total += n + 1; total > maxArgBytes {
			return nil, errors.New("arguments too long to check")
		}
		switch {
		case keep == nil:
			out = append(out, m.text(p, n))
		case keep(m.view(p, n)):
			out = append(out, m.text(p, n))
		}
	}
	return out, nil
}

// same reports whether the bytes read since reset are still what they
// were: their pages read again in one call (more for a huge argv), the
// spans compared. A page that can no longer be read has changed.
func (m *mem) same() bool {
	bases, bufs := m.bases[:0], m.bufs[:0]
	for _, p := range m.pages {
		if p.b != nil {
			bases, bufs = append(bases, p.base), append(bufs, m.buf())
		}
	}
	kept := append(m.kept[:0], bufs...)
	m.bases, m.bufs, m.kept = bases, bufs, kept
	defer func() { m.free = append(m.free, kept...) }()
	m.readPages(bases, bufs)
	// pos[j] is where m.pages[j] was read again in bufs.
	pos := m.pos[:0]
	k := 0
	for _, p := range m.pages {
		pos = append(pos, k)
		if p.b != nil {
			k++
		}
	}
	m.pos = pos
	for _, s := range m.spans {
		for addr, end := s.addr, s.addr+uint64(s.n); addr < end; {
			base := addr &^ (pageSize - 1)
			stop := min(end, base+pageSize)
			i, ok := m.at[base]
			if !ok || m.pages[i].b == nil {
				return false
			}
			b := bufs[pos[i]]
			if b == nil || !bytes.Equal(m.pages[i].b[addr-base:stop-base], b[addr-base:stop-base]) {
				return false
			}
			addr = stop
		}
	}
	return true
}
