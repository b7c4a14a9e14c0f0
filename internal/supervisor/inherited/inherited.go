// Package inherited records what this process was started with that the
// Go runtime and the standard library change as they start, so that the
// supervisor can give the program it runs what a shell in its place
// would: the soft RLIMIT_NOFILE (package syscall raises it to the hard
// limit in its init) and the descriptors inherited open across exec.
//
// It imports no package that imports syscall, and sorts before syscall
// by import path, so that it is initialized before syscall is (the
// order of package initialization is the Go specification's: the first
// package in import-path order whose imports are all initialized). Its
// system calls are syscall.RawSyscall6 by link name, which needs no
// initialization. A test holds the order.
//
// The descriptors are listed by Scan, not at start: listing /proc/self/fd
// costs about 85 µs, which a process that never runs the layer (the
// hook) should not pay. The list stays right when made later because
// nothing in this process opens a descriptor without close-on-exec (Go's
// packages never do, and the supervisor's own dups are made
// close-on-exec): a descriptor found open and not close-on-exec is one
// inherited. A process that runs the layer calls Scan first thing all
// the same; Files calls it if nothing did.
package inherited

// Limit is a resource limit, soft and hard.
type Limit struct{ Cur, Max uint64 }

// File is a descriptor inherited open (not close-on-exec) at start, and
// the file it held: the same descriptor holding another file later is
// not the one inherited.
type File struct {
	Fd       int
	Dev, Ino uint64
}

var (
	nofile   Limit
	nofileOK bool
	files    []File
	filesOK  bool
)

// Nofile returns RLIMIT_NOFILE as the process started with it; ok is
// false when it could not be read.
func Nofile() (Limit, bool) { return nofile, nofileOK }

// Files returns the descriptors above 2 inherited open across exec, in
// increasing order; ok is false when they could not be listed (no /proc):
// then none is known to be inherited. It scans them (Scan) the first
// time.
func Files() ([]File, bool) {
	Scan()
	return files, filesOK
}

// Scan lists the descriptors inherited open across exec, once; a
// process that will run the layer calls it before anything else.
func Scan() {
	if !scanned {
		scanned = true
		files, filesOK = scanFiles()
	}
}

var scanned bool
