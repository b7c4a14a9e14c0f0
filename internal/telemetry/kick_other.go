//go:build !unix

package telemetry

import "os"

func startDetached(prog string, argv []string) error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	p, err := os.StartProcess(prog, argv, &os.ProcAttr{Files: []*os.File{null, null, null}})
	if err != nil {
		return err
	}
	return p.Release()
}
