//go:build unix

package telemetry

import "syscall"

// noWait opens the export's lock and the stamp without waiting (on a FIFO
// in their place) and never through a link.
const noWait = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
