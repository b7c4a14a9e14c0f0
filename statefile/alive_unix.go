//go:build unix

package statefile

import (
	"errors"
	"syscall"
)

// alive reports whether a process with this pid may exist: only ESRCH
// says it does not (EPERM is a live process of another user).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
