//go:build !unix

package statefile

// NoWait: this system has neither FIFOs that block an open nor
// O_NOFOLLOW.
const NoWait = 0
