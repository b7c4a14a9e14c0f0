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
// load kernel modules. So the restricted thread empties the sets an
// execution computes a program's capabilities from, the bounding,
// ambient and inheritable sets; from the program's first execution on
// the tree holds none. Root without capabilities is still uid 0: see the
// package doc for what it may still change.

// capData is struct __user_cap_data_struct; two of them for version 3.
type capData struct{ effective, permitted, inheritable uint32 }

type capHeader struct {
	version uint32
	pid     int32
}

// capabilities returns the calling thread's capability sets.
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

// dropCapabilities empties the calling thread's bounding, ambient and
// inheritable sets, so that what it starts holds no capability after its
// execve, root or not. Emptying the bounding set needs CAP_SETPCAP, which
// root has; a process that lacks it and is not root gains nothing at an
// execve under no_new_privs anyway, and one that is root cannot run a tree
// without its capabilities: that fails.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clearing the ambient capabilities: %w", err)
	}
	hdr, data, err := capabilities()
	if err != nil {
		return fmt.Errorf("reading the capabilities: %w", err)
	}
	data[0].inheritable, data[1].inheritable = 0, 0
	if _, _, errno := unix.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); errno != 0 {
		return fmt.Errorf("clearing the inheritable capabilities: %w", errno)
	}
	for c := 0; ; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		switch {
		case errors.Is(err, unix.EINVAL): // past the last capability
			return nil
		case err != nil:
			return fmt.Errorf("reading the capability bounding set: %w", err)
		case in == 0:
			continue
		}
		err = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		switch {
		case errors.Is(err, unix.EPERM) && os.Geteuid() != 0:
			return nil
		case err != nil:
			return fmt.Errorf("emptying the capability bounding set: %w", err)
		}
	}
}
