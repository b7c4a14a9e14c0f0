package telemetry

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://c:4318/v1/logs"}, true},
		{map[string]string{"OTEL_LOGS_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_LOGS_EXPORTER": "console, otlp"}, true},
		{map[string]string{"OTEL_LOGS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, false},
		{map[string]string{"OTEL_LOGS_EXPORTER": "console", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_LOGS_EXPORTER": "otlp"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_LOGS_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c"}, false},
	} {
		t.Logf("env: %v", tc.env)
		if got := Enabled(envOf(tc.env)); got != tc.want {
			t.Errorf("Enabled = %v, want %v", got, tc.want)
		}
	}
}

func TestInterval(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", DefaultInterval},
		{"5000", 5 * time.Second},
		{"1000", time.Second},
		{"10", DefaultInterval}, // a process per call is what the stamp prevents
		{"-1", DefaultInterval},
		{"x", DefaultInterval},
	} {
		t.Logf("input: %q", tc.in)
		if got := Interval(envOf(map[string]string{"OTEL_BLRP_SCHEDULE_DELAY": tc.in})); got != tc.want {
			t.Errorf("Interval = %v, want %v", got, tc.want)
		}
	}
}

// TestKick: the exporter is started when export is on and the stamp is
// older than the interval, once per interval, never when export is off.
func TestKick(t *testing.T) {
	var started [][]string
	start = func(prog string, argv []string) error {
		started = append(started, argv)
		return nil
	}
	t.Cleanup(func() { start = startDetached })
	dir := t.TempDir()
	logPath := filepath.Join(dir, "agent-shim", "decisions.jsonl")
	on := envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"})
	off := envOf(nil)
	now := time.Now()

	if err := Kick(off, logPath, now); err != nil || len(started) != 0 {
		t.Fatalf("export off: started %v, err %v", started, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "agent-shim", StampName)); err == nil {
		t.Fatal("export off wrote a stamp")
	}
	steps := []struct {
		at   time.Duration
		want int
	}{
		{0, 1},
		{time.Second, 1},
		{DefaultInterval - time.Millisecond, 1},
		{DefaultInterval, 2},
		{DefaultInterval + time.Second, 2},
		{3 * DefaultInterval, 3},
		{-time.Hour, 4}, // a stamp in the future (a clock set back) does not stop export
	}
	for _, s := range steps {
		if err := Kick(on, logPath, now.Add(s.at)); err != nil {
			t.Fatal(err)
		}
		if len(started) != s.want {
			t.Fatalf("at %v: started %d times, want %d", s.at, len(started), s.want)
		}
	}
	if argv := started[0]; len(argv) != 3 || filepath.Base(argv[0]) != ExporterName || argv[2] != logPath {
		t.Errorf("started %q", argv)
	}
	start = func(string, []string) error { return errors.New("no such program") }
	if err := Kick(on, logPath, now.Add(time.Hour)); err == nil {
		t.Error("a failed start was no error")
	}
}
