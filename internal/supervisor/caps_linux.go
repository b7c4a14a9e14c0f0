//go:build linux && (amd64 || arm64)

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Capabilities. A tree run as root would keep every capability root has
// across its executions (no_new_privs only keeps it from gaining more):
// it could make device nodes, set immutable flags, trace any process,
// load kernel modules. So the program's process empties the sets an
// execution computes a program's capabilities from, the bounding,
// ambient and inheritable sets, before its execve; from the program's
// first execution on the tree holds none. Root without capabilities is still uid 0: see the
// package doc for what it may still change.

// capData is struct __user_cap_data_struct; two of them for version 3.
type capData struct{ effective, permitted, inheritable uint32 }

type capHeader struct {
	version uint32
	pid     int32
}

// capabilities returns the calling thread's capability sets (the sets
// of the process it starts).
func capabilities() (hdr capHeader, data [2]capData, err error) {
	hdr = capHeader{version: unix.LINUX_CAPABILITY_VERSION_3}
	if _, _, errno := unix.RawSyscall(unix.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); errno != 0 {
		return hdr, data, errno
	}
	return hdr, data, nil
}

// hasCapability reports whether the calling thread has capability c in
// its effective set.
func hasCapability(c uint) bool {
	_, data, err := capabilities()
	return err == nil && c < 64 && data[c/32].effective&(1<<(c%32)) != 0
}

// capDrops says what the program's process must drop to hold no
// capability after its execve, root or not: the capabilities to drop from
// the bounding set (as bits: all of them, the child stopping at the first
// past the last), and the sets to write back with the inheritable ones
// cleared. Dropping from the bounding set needs CAP_SETPCAP, which root
// has; a process that lacks it and is not root gains nothing at an execve
// under no_new_privs anyway (bounding is left), and one that is root
// cannot run a tree without its capabilities: that fails, unless its
// bounding set is empty already (a tree's own).
func capDrops() (bounding uint64, hdr capHeader, data [2]capData, err error) {
	hdr, data, err = capabilities()
	if err != nil {
		return 0, hdr, data, fmt.Errorf("reading the capabilities: %w", err)
	}
	data[0].inheritable, data[1].inheritable = 0, 0
	switch {
	case data[unix.CAP_SETPCAP/32].effective&(1<<(unix.CAP_SETPCAP%32)) != 0:
		return ^uint64(0), hdr, data, nil
	case os.Geteuid() != 0:
		return 0, hdr, data, nil
	}
	for c := 0; c < 64; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		switch {
		case errors.Is(err, unix.EINVAL): // past the last capability
			return 0, hdr, data, nil
		case err != nil:
			return 0, hdr, data, fmt.Errorf("reading the capability bounding set: %w", err)
		case in != 0:
			return 0, hdr, data, errors.New("emptying the capability bounding set: root without CAP_SETPCAP")
		}
	}
	return 0, hdr, data, nil
}
