package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/agents"
)

// TestTelemetryCheck: each setting the exporter would refuse, and an
// exporter missing beside agent-shim, fails doctor; good settings pass,
// and no settings is export off.
func TestTelemetryCheck(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "bin", "agent-shim")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	exporter := filepath.Join(dir, "bin", "agent-shim-export")
	if err := os.WriteFile(exporter, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.json")
	for _, tc := range []struct {
		name, section string
		env           map[string]string
		noExporter    bool
		want          agents.Status
		detail        string
	}{
		{name: "none", want: agents.Info, detail: "off: "},
		{name: "section", section: `{"endpoint": "https://otel.example.com:4318", "interval": "30s"}`,
			want: agents.OK, detail: "on: to https://otel.example.com:4318 (http/protobuf), at most every 30s"},
		{name: "variables", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			want: agents.OK, detail: "on: to the endpoint of the OTEL_EXPORTER_OTLP_ variables (grpc)"},
		{name: "disabled", section: `{"endpoint": "https://otel.example.com:4318"}`, env: map[string]string{"OTEL_SDK_DISABLED": "true"},
			want: agents.Info, detail: "off: "},
		{name: "bad interval", section: `{"endpoint": "https://otel.example.com:4318", "interval": "10"}`,
			want: agents.Fail, detail: `agentShim.telemetry.interval: "10" is not a duration`},
		{name: "unknown key", section: `{"endpiont": "https://otel.example.com:4318"}`,
			want: agents.Fail, detail: "unknown key"},
		{name: "bad endpoint", section: `{"endpoint": "otel.example.com:4318"}`,
			want: agents.Fail, detail: "is not an http:// or https:// URL"},
		{name: "bad protocol variable", section: `{"endpoint": "https://otel.example.com:4318"}`, env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			want: agents.Fail, detail: `protocol "http/json" is not supported`},
		{name: "bad endpoint variable", env: map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "127.0.0.1:4318"},
			want: agents.Fail, detail: `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT="127.0.0.1:4318" is not an http:// or https:// URL`},
		{name: "bad delay variable", section: `{"endpoint": "https://otel.example.com:4318"}`, env: map[string]string{"OTEL_BLRP_SCHEDULE_DELAY": "10"},
			want: agents.Fail, detail: `OTEL_BLRP_SCHEDULE_DELAY="10" is not milliseconds from 1000 to 3600000`},
		{name: "no exporter", section: `{"endpoint": "https://otel.example.com:4318"}`, noExporter: true,
			want: agents.Fail, detail: "agent-shim-export is not there"},
	} {
		t.Logf("case: %s", tc.name)
		doc := `{"userSettings": {"globalPermissionGrants": {"allow": []}}}`
		if tc.section != "" {
			doc = `{"agentShim": {"telemetry": ` + tc.section + `}}`
		}
		if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		o := Options{Exe: exe, Config: cfg, Getenv: func(k string) string { return tc.env[k] }}
		if tc.noExporter {
			o.Exe = filepath.Join(dir, "agent-shim")
		}
		c := o.telemetryCheck(cfg)
		if c.Status != tc.want || !strings.Contains(c.Detail, tc.detail) {
			t.Errorf("%s: %s %q, want %s with %q", tc.name, c.Status, c.Detail, tc.want, tc.detail)
		}
		if c.Status == agents.Fail && c.Fix == "" {
			t.Errorf("%s: a failure without a fix", tc.name)
		}
	}
}
