// Package telemetry sends the decision log to an OpenTelemetry collector
// without ever holding up a decision.
//
// The local log (package decisionlog) is the queue. A hook call only
// stats a stamp file (Kick); at most once per interval it starts the
// exporter, agent-shim-export, detached, and goes on. The exporter reads
// the log from the position saved in the state directory (Queue), sends
// what it finds, and saves the new position only after the collector
// acknowledged it: a slow or dead collector delays the export, never a
// verdict, and loses no record the local log still holds.
//
// Positions are kept per file, by device and inode, so that rotation
// (decisions.jsonl becomes decisions.jsonl.1) and a writer that appends to
// the renamed file after it are both followed. A record may be sent twice
// (the collector acknowledged, the exporter died before saving); none is
// skipped.
//
// This package links no network code: the hook imports it.
package telemetry

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Files in the state directory, beside decisions.jsonl.
const (
	CursorName = "export.json"  // positions exported so far
	StampName  = "export.stamp" // when the exporter was last started
	LockName   = "export.lock"  // held by the running exporter
)

// DefaultInterval is how often at most a hook starts the exporter.
const DefaultInterval = 10 * time.Second

// Enabled reports whether decisions are to be exported, by the standard
// OpenTelemetry variables: an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT), or OTEL_LOGS_EXPORTER names otlp;
// OTEL_SDK_DISABLED=true and OTEL_LOGS_EXPORTER=none turn it off.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	exp := strings.ToLower(getenv("OTEL_LOGS_EXPORTER"))
	if exp != "" {
		for _, x := range strings.Split(exp, ",") {
			if strings.TrimSpace(x) == "otlp" {
				return true
			}
		}
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// Interval is how often at most the exporter is started: the standard
// OTEL_BLRP_SCHEDULE_DELAY (milliseconds) when it is at least one second,
// else DefaultInterval.
func Interval(getenv func(string) string) time.Duration {
	if ms, err := strconv.Atoi(strings.TrimSpace(getenv("OTEL_BLRP_SCHEDULE_DELAY"))); err == nil && ms >= 1000 {
		return time.Duration(ms) * time.Millisecond
	}
	return DefaultInterval
}

// stateFile names a file beside the log.
func stateFile(logPath, name string) string { return filepath.Join(filepath.Dir(logPath), name) }
