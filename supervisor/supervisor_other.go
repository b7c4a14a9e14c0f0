//go:build !linux || !(amd64 || arm64)

package supervisor

import (
	"context"
	"fmt"
	"io"
	"runtime"
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

// Child is the hidden child mode; here it refuses.
func Child(stderr io.Writer) int {
	_, why := Available()
	fmt.Fprintf(stderr, "agent-shim: error: %s\n", why)
	return 126
}
