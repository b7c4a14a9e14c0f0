//go:build !unix

package gate

import "os"

// openRead is os.Open (see open_unix.go).
func openRead(path string) (*os.File, error) { return os.Open(path) }
