//go:build unix

package statefile

import "syscall"

// NoWait are the open flags of a file in a state directory that any
// process able to read it could stand in the way of: never wait (on a
// FIFO planted in its place) and never follow a link (planted to send the
// open elsewhere).
const NoWait = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
