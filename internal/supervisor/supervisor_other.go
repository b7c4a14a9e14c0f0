//go:build !linux || !(amd64 || arm64)

package supervisor

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// Available reports whether the run-time layer can run here and, when it
// cannot, why.
func Available() (ok bool, why string) {
	return false, "the run-time layer needs Linux on amd64 or arm64 (this is " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}

// Run is unavailable here.
func Run(ctx context.Context, cfg Config) (Status, error) {
	_, why := Available()
	return Status{}, unavailable("%s", why)
}

// Reraise kills the calling process with sig. It returns only when sig
// does not kill.
func Reraise(sig syscall.Signal) {
	signal.Reset(sig)
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(100 * time.Millisecond)
}
