//go:build linux && (amd64 || arm64)

package supervisor

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// memArena is four pages of this process laid out by hand (an argv of
// strings and its pointer array), read through mem as the supervisor
// reads a tree's process; the fourth page is PROT_NONE.
type memArena struct {
	b []byte
}

func newArena(t *testing.T) *memArena {
	b, err := unix.Mmap(-1, 0, 4*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	if err := unix.Mprotect(b[3*pageSize:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	return &memArena{b: b}
}

func (a *memArena) addr(off int) uint64 {
	return uint64(uintptr(unsafe.Pointer(&a.b[0]))) + uint64(off)
}

// put writes s NUL-terminated at offset off and returns its address.
func (a *memArena) put(off int, s string) uint64 {
	copy(a.b[off:], s)
	a.b[off+len(s)] = 0
	return a.addr(off)
}

// array writes a NULL-terminated pointer array at off.
func (a *memArena) array(off int, ptrs ...uint64) uint64 {
	for i, p := range append(ptrs, 0) {
		binary.LittleEndian.PutUint64(a.b[off+8*i:], p)
	}
	return a.addr(off)
}

func TestMemStrings(t *testing.T) {
	a := newArena(t)
	across := strings.Repeat("y", 100)
	s1 := a.put(0, "git")
	s2 := a.put(pageSize-50, across) // from page 0 into page 1
	s3 := a.put(200, "")
	s4 := a.put(300, "LD_PRELOAD=/tmp/x.so")
	argv := a.array(2*pageSize-12, s1, s2, s3, s4) // the array crosses pages too
	m := newMem()
	m.reset(os.Getpid())
	got, err := m.strings(argv, nil)
	if want := []string{"git", across, "", "LD_PRELOAD=/tmp/x.so"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("strings: %q, %v; want %q", got, err, want)
	}
	kept, err := m.strings(argv, func(s string) bool { return strings.HasPrefix(s, "LD_") })
	if err != nil || !slices.Equal(kept, []string{"LD_PRELOAD=/tmp/x.so"}) {
		t.Errorf("kept %q, %v", kept, err)
	}
	if m.reads > 3 {
		t.Errorf("%d reads for three pages", m.reads)
	}
	if !m.same() {
		t.Errorf("same: false for memory nobody changed")
	}

	// A byte nobody read may change; any byte read may not.
	tests := []struct {
		off  int
		same bool
	}{
		{1000, true},             // between the strings
		{0, false},               // "git"
		{pageSize + 49, false},   // the end of the string across pages
		{pageSize + 50, false},   // its NUL
		{2*pageSize - 4, false},  // a pointer of the array
		{2*pageSize + 20, false}, // the array's NULL
		{2*pageSize + 28, true},  // just past it
		{203, true},              // past the empty string's NUL
		{200, false},             // the empty string's NUL
	}
	for _, tc := range tests {
		t.Logf("input: byte %d", tc.off)
		m.reset(os.Getpid())
		if _, err := m.strings(argv, nil); err != nil {
			t.Fatal(err)
		}
		old := a.b[tc.off]
		a.b[tc.off] ^= 0x55
		if got := m.same(); got != tc.same {
			t.Errorf("byte %d changed: same %v, want %v", tc.off, got, tc.same)
		}
		a.b[tc.off] = old
	}
}

// Memory that cannot be read is an error, never a short string.
func TestMemUnreadable(t *testing.T) {
	a := newArena(t)
	copy(a.b[3*pageSize-3:], "abc") // runs into the PROT_NONE page
	tail := a.addr(3*pageSize - 3)
	m := newMem()
	m.reset(os.Getpid())
	if s, err := m.string(tail); err == nil {
		t.Errorf("string into an unreadable page: %q", s)
	}
	if s, err := m.string(a.addr(3 * pageSize)); err == nil {
		t.Errorf("string on an unreadable page: %q", s)
	}
	if _, err := m.strings(a.array(100, a.put(200, "ok"), tail), nil); err == nil {
		t.Errorf("strings with one unreadable: no error")
	}
	if _, err := m.string(0); err == nil {
		t.Errorf("a null pointer read")
	}
}

// TestResolveWritable: the writable paths resolve as EvalSymlinks
// resolves them, links on the way included, and those it cannot resolve
// are left out.
func TestResolveWritable(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"real/sub", "target/in"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "target"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	var in []string
	for _, p := range []string{"real", "real/sub", "real/sub/", "real/./sub/..", "link", "link/in", "target/in",
		"missing", "missing/below", "file", "file/below", "dangling", "dangling/x", "real/missing"} {
		in = append(in, filepath.Join(dir, p))
	}
	in = append(in, dir+"/real/sub/", "/dev/null", "relative", "/")
	var want []string
	for _, p := range in {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			want = append(want, r)
		}
	}
	if got, planted := resolveWritable(in); !slices.Equal(got, want) || len(planted) > 0 {
		t.Errorf("resolveWritable(%q)\n= %q\nwant %q", in, got, want)
	}
}

// TestReadFile: a file read whole whatever size Lstat gave.
func TestReadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	const content = "0123456789abcdef"
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{0, 4, 15, 16, 17, 100} {
		got, err := readFile(p, size)
		if err != nil || string(got) != content {
			t.Errorf("size %d: %q, %v; want %q", size, got, err, content)
		}
	}
	if err := os.Symlink(p, p+".link"); err != nil {
		t.Fatal(err)
	}
	if _, err := readFile(p+".link", 16); err == nil {
		t.Error("a link was followed")
	}
}

// TestClockSettable: a process with CAP_SYS_TIME permitted (root here) may
// set the clock back to a file's ctime, and its snapshot takes no
// shortcut; one without it (an unprivileged child) may not.
func TestClockSettable(t *testing.T) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		t.Fatal(err)
	}
	want := data[0].Permitted&(1<<unix.CAP_SYS_TIME) != 0
	if got := clockSettable(); got != want {
		t.Errorf("clockSettable() = %v, want %v", got, want)
	}
	s, err := TakeSnapshot([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if want && !s.before.IsZero() {
		t.Errorf("CAP_SYS_TIME permitted, yet files changed before %v are not read again", s.before)
	}
	if !want && s.before.IsZero() {
		t.Error("no CAP_SYS_TIME, yet no shortcut")
	}
}
