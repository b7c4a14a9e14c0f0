package telemetry

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-shim/agent-shim/internal/config"
)

// ExporterName is the exporter's program, installed beside agent-shim.
// It is a program of its own because it links the network code and the
// OpenTelemetry SDK, whose package initialisation agent-shim, started on
// every tool call, must not pay.
const ExporterName = "agent-shim-export"

// start starts the exporter detached (kick_unix.go); tests replace it.
var start = startDetached

// Kick starts the exporter for the log at logPath when export is on and
// due. A call that is not due costs one stat of the stamp file, whose time
// is when the next start is due; the call that finds it due (once per
// interval) reads the settings (Load: config.json's telemetry section
// through its copy, the variables over it), sets the stamp an interval
// ahead and, when export is on, starts the exporter, which outlives the
// hook, and waits for nothing else. Two hooks that find the same stamp
// due may both start one: the exporter's lock makes the second leave at
// once. OTEL_SDK_DISABLED=true, or an OTEL_LOGS_EXPORTER without otlp,
// costs nothing at all.
func Kick(getenv func(string) string, logPath, configPath string, now time.Time) error {
	if on, set := envSwitch(getenv); set && !on {
		return nil
	}
	stamp := StampPath(getenv, logPath)
	if fi, err := os.Stat(stamp); err == nil {
		// Not due, unless the stamp is further ahead than any interval
		// (a clock set back).
		if due := fi.ModTime(); now.Before(due) && due.Sub(now) <= config.MaxTelemetryInterval {
			return nil
		}
	}
	s, err := Load(getenv, logPath, configPath)
	if err != nil {
		// Tried again at the next interval; the warning says why.
		touch(stamp, now.Add(DefaultInterval))
		return fmt.Errorf("reading the decision export's settings: %w", err)
	}
	if err := touch(stamp, now.Add(s.Interval)); err != nil {
		return fmt.Errorf("starting the decision export: %w", err)
	}
	if !s.Enabled {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("starting the decision export: %w", err)
	}
	prog := filepath.Join(filepath.Dir(exe), ExporterName)
	argv := []string{prog, "--log", logPath}
	if configPath != "" {
		argv = append(argv, "--config", configPath)
	}
	if err := start(prog, argv); err != nil {
		return fmt.Errorf("starting the decision export: %w", err)
	}
	return nil
}

// stampVars are the variables that decide whether and how often export
// starts; the stamp is kept per combination of their values.
var stampVars = []string{"OTEL_SDK_DISABLED", "OTEL_LOGS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_BLRP_SCHEDULE_DELAY"}

// StampPath is the stamp for the environment getenv gives: StampName
// beside the log when none of stampVars is set, else StampName-<a digest
// of their values>. A stamp says "not due" for on and off alike, so a
// session whose variables turn export on must not find the stamp of one
// without them: it starts the exporter at once, not an interval later.
func StampPath(getenv func(string) string, logPath string) string {
	h := fnv.New32a()
	set := false
	for _, k := range stampVars {
		v := getenv(k)
		set = set || v != ""
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	if !set {
		return stateFile(logPath, StampName)
	}
	return stateFile(logPath, fmt.Sprintf("%s-%08x", StampName, h.Sum32()))
}

// touch sets the stamp's time to t, creating it (and the state
// directory) when missing: never through a link, never waiting on a FIFO.
func touch(path string, t time.Time) error {
	if err := os.Chtimes(path, t, t); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|noWait, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return os.Chtimes(path, t, t)
}
