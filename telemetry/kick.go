package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ExporterName is the exporter's program, installed beside agent-shim.
// It is a program of its own because it links the network code and the
// OpenTelemetry SDK, whose package initialisation agent-shim, started on
// every tool call, must not pay.
const ExporterName = "agent-shim-export"

// start starts the exporter detached (kick_unix.go); tests replace it.
var start = startDetached

// Kick starts the exporter for the log at logPath when export is enabled
// and it was not started in the last interval. It costs a hook call one
// stat of the stamp file; the call that finds the stamp old touches it
// and starts the exporter, which outlives the hook, and waits for
// nothing else. Two hooks that find the same old stamp may both start
// one: the exporter's lock makes the second leave at once.
func Kick(getenv func(string) string, logPath string, now time.Time) error {
	if !Enabled(getenv) {
		return nil
	}
	stamp := stateFile(logPath, StampName)
	fi, err := os.Stat(stamp)
	if err == nil {
		if age := now.Sub(fi.ModTime()); age >= 0 && age < Interval(getenv) {
			return nil
		}
	}
	if err := touch(stamp, now); err != nil {
		return fmt.Errorf("starting the decision export: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("starting the decision export: %w", err)
	}
	prog := filepath.Join(filepath.Dir(exe), ExporterName)
	if err := start(prog, []string{prog, "--log", logPath}); err != nil {
		return fmt.Errorf("starting the decision export: %w", err)
	}
	return nil
}

// touch sets the stamp's time to now, creating it (and the state
// directory) when missing.
func touch(path string, now time.Time) error {
	if err := os.Chtimes(path, now, now); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return os.Chtimes(path, now, now)
}
