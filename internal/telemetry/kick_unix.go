//go:build unix

package telemetry

import (
	"os"
	"syscall"
)

// startDetached starts prog in a session of its own, its standard files
// on /dev/null, and does not wait for it: the agent waits for the hook's
// output to close, which the exporter does not hold.
func startDetached(prog string, argv []string) error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	p, err := os.StartProcess(prog, argv, &os.ProcAttr{
		Dir:   "/", // holding no directory of the project
		Files: []*os.File{null, null, null},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return err
	}
	return p.Release()
}
