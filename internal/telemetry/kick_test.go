package telemetry

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-shim/agent-shim/internal/config"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEnabled(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		env     map[string]string
		section *config.Telemetry
		want    bool
	}{
		{nil, nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, nil, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://c:4318/v1/logs"}, nil, true},
		{map[string]string{"OTEL_LOGS_EXPORTER": "otlp"}, nil, true},
		{map[string]string{"OTEL_LOGS_EXPORTER": "console, otlp"}, nil, true},
		{map[string]string{"OTEL_LOGS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, nil, false},
		{map[string]string{"OTEL_LOGS_EXPORTER": "console", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, nil, false},
		{map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_LOGS_EXPORTER": "otlp"}, nil, false},
		{map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_LOGS_EXPORTER": "otlp"}, nil, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c"}, nil, false},
		// The section: an endpoint turns it on, "enabled" decides when
		// set, and the variables decide over it.
		{nil, &config.Telemetry{Endpoint: "http://c:4318"}, true},
		{nil, &config.Telemetry{Endpoint: "http://c:4318", Enabled: &no}, false},
		{nil, &config.Telemetry{Enabled: &yes}, true},
		{nil, &config.Telemetry{Protocol: "grpc"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, &config.Telemetry{Enabled: &no}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true"}, &config.Telemetry{Endpoint: "http://c:4318", Enabled: &yes}, false},
		{map[string]string{"OTEL_LOGS_EXPORTER": "none"}, &config.Telemetry{Endpoint: "http://c:4318", Enabled: &yes}, false},
		{map[string]string{"OTEL_LOGS_EXPORTER": "otlp"}, &config.Telemetry{Endpoint: "http://c:4318", Enabled: &no}, true},
	} {
		t.Logf("env: %v, section: %+v", tc.env, tc.section)
		if got := Resolve(envOf(tc.env), tc.section).Enabled; got != tc.want {
			t.Errorf("Enabled = %v, want %v", got, tc.want)
		}
	}
}

// TestResolve: the variables win over the section key by key.
func TestResolve(t *testing.T) {
	sec := &config.Telemetry{Endpoint: "https://otel.example.com:4318", Protocol: "grpc",
		Headers: map[string]string{"authorization": "Bearer x"}, Interval: "30s"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Settings
	}{
		{"section only", nil, Settings{Enabled: true, Endpoint: sec.Endpoint, Protocol: "grpc", Headers: sec.Headers, Interval: 30 * time.Second}},
		{"variables over it", map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
			"OTEL_EXPORTER_OTLP_HEADERS": "a=b", "OTEL_BLRP_SCHEDULE_DELAY": "5000",
		}, Settings{Enabled: true, Protocol: "http/protobuf", Interval: 5 * time.Second}},
		{"the signal's own", map[string]string{
			"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://127.0.0.1:4318/v1/logs", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/protobuf",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_LOGS_HEADERS": "a=b",
		}, Settings{Enabled: true, Protocol: "http/protobuf", Interval: 30 * time.Second}},
		{"a delay out of bounds is not taken", map[string]string{"OTEL_BLRP_SCHEDULE_DELAY": "10"},
			Settings{Enabled: true, Endpoint: sec.Endpoint, Protocol: "grpc", Headers: sec.Headers, Interval: 30 * time.Second}},
	} {
		t.Logf("%s: env %v", tc.name, tc.env)
		if diff := cmp.Diff(tc.want, Resolve(envOf(tc.env), sec)); diff != "" {
			t.Errorf("Resolve (-want +got):\n%s", diff)
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
		{"3600000", time.Hour},
		{"3600001", DefaultInterval},
		{"10", DefaultInterval}, // a process per call is what the stamp prevents
		{"-1", DefaultInterval},
		{"x", DefaultInterval},
	} {
		t.Logf("input: %q", tc.in)
		if got := Resolve(envOf(map[string]string{"OTEL_BLRP_SCHEDULE_DELAY": tc.in}), nil).Interval; got != tc.want {
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

	disabled := envOf(map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"})
	if err := Kick(disabled, logPath, "", now); err != nil || len(started) != 0 {
		t.Fatalf("export disabled: started %v, err %v", started, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "agent-shim")); len(ents) != 0 {
		t.Fatalf("export disabled by a variable wrote %v", ents)
	}
	// Nothing configured: nothing started, and the stamp makes the next
	// calls of the interval one stat.
	if err := Kick(off, logPath, "", now.Add(-time.Minute)); err != nil || len(started) != 0 {
		t.Fatalf("export off: started %v, err %v", started, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "agent-shim", StampName)); err != nil || !fi.ModTime().Equal(now.Add(-time.Minute+DefaultInterval)) {
		t.Fatalf("export off: stamp %v, %v; want it due an interval later", fi, err)
	}
	// A session whose variables turn export on does not wait for the
	// stamp of one without them.
	steps := []struct {
		at   time.Duration
		want int
	}{
		{-time.Minute + time.Second, 1},
		{0, 2},
		{time.Second, 2},
		{DefaultInterval - time.Millisecond, 2},
		{DefaultInterval, 3},
		{DefaultInterval + time.Second, 3},
		{3 * DefaultInterval, 4},
		{-time.Hour, 5}, // a stamp in the future (a clock set back) does not stop export
	}
	for _, s := range steps {
		if err := Kick(on, logPath, "", now.Add(s.at)); err != nil {
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
	if err := Kick(on, logPath, "", now.Add(time.Hour)); err == nil {
		t.Error("a failed start was no error")
	}
}

// TestKickConfig: config.json's telemetry section turns export on with no
// variable set, the exporter is told the config file, and config.json is
// read again only after it changed (its copy beside the log stands in
// for it); a bad section is an error naming the file and the key, and
// starts nothing.
func TestKickConfig(t *testing.T) {
	var started [][]string
	start = func(prog string, argv []string) error {
		started = append(started, argv)
		return nil
	}
	t.Cleanup(func() { start = startDetached })
	dir := t.TempDir()
	logPath := filepath.Join(dir, "state", "decisions.jsonl")
	cfg := filepath.Join(dir, "config.json")
	write := func(content string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(cfg, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	noEnv := envOf(nil)
	now := time.Now()
	mtime := now.Add(-time.Hour)
	const on = `{"agentShim": {"telemetry": {"endpoint": "http://127.0.0.1:1", "interval": "2s"}}}`
	write(on, mtime)
	if err := Kick(noEnv, logPath, cfg, now); err != nil {
		t.Fatal(err)
	}
	if len(started) != 1 || !slices.Equal(started[0][1:], []string{"--log", logPath, "--config", cfg}) {
		t.Fatalf("started %q", started)
	}
	// The section's interval: due again after 2s, not before.
	for _, s := range []struct {
		at   time.Duration
		want int
	}{{time.Second, 1}, {2 * time.Second, 2}} {
		if err := Kick(noEnv, logPath, cfg, now.Add(s.at)); err != nil {
			t.Fatal(err)
		}
		if len(started) != s.want {
			t.Fatalf("at %v: started %d times, want %d", s.at, len(started), s.want)
		}
	}
	// The same size and time: the copy is read, not config.json (whose
	// bytes are no JSON now).
	write(strings.Repeat("x", len(on)), mtime)
	if err := Kick(noEnv, logPath, cfg, now.Add(10*time.Second)); err != nil || len(started) != 3 {
		t.Fatalf("config.json was read although it had not changed: %v, started %d", err, len(started))
	}
	// Changed: read again. Off in the section: nothing started.
	write(`{"agentShim": {"telemetry": {"endpoint": "http://127.0.0.1:1", "enabled": false}}}`, mtime.Add(time.Second))
	if err := Kick(noEnv, logPath, cfg, now.Add(20*time.Second)); err != nil || len(started) != 3 {
		t.Fatalf("enabled false: %v, started %d", err, len(started))
	}
	// A bad value: an error naming the file and the key, nothing started.
	write(`{"agentShim": {"telemetry": {"protocol": "http/json"}}}`, mtime.Add(2*time.Second))
	err := Kick(noEnv, logPath, cfg, now.Add(40*time.Second))
	if err == nil || !strings.Contains(err.Error(), cfg+": agentShim.telemetry.protocol") || len(started) != 3 {
		t.Fatalf("a bad section: %v, started %d", err, len(started))
	}
}
