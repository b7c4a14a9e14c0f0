//go:build !unix

package decisionlog

import "os"

func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}

func writeOnce(f *os.File, b []byte) (int, error) { return f.Write(b) }
