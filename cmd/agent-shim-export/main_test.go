package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/otlp/otlptest"
	"github.com/agent-shim/agent-shim/internal/telemetry"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// TestExportResume: a collector that refuses gets nothing acknowledged
// and the position stays; once it accepts, every record arrives, once.
func TestExportResume(t *testing.T) {
	retry = otlploghttp.RetryConfig{Enabled: false}
	dir := t.TempDir()
	for _, k := range []string{"HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, filepath.Join(dir, k))
	}
	rc := &otlptest.Receiver{Status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	t.Setenv("OTEL_SERVICE_NAME", "")

	logPath := filepath.Join(dir, "state", decisionlog.FileName)
	w := decisionlog.NewWriter(logPath, decisionlog.Options{})
	for _, c := range []string{"git status", "git push --force origin main", "curl -u bob:hunter2 https://x"} {
		w.Log(decisionlog.Entry{Time: t0, Agent: "codex", Layer: "hook", Command: c, Verdict: "ask"})
	}
	var want []string
	es, _, err := decisionlog.Read(logPath, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		want = append(want, e.Command) // as the log holds it: redacted
	}
	if slices.Contains(want, "curl -u bob:hunter2 https://x") {
		t.Fatalf("the log holds a secret: %q", want)
	}
	args := []string{"agent-shim-export", "--once", "--log", logPath}
	var stderr bytes.Buffer
	if code := run(context.Background(), args, &stderr); code != exitError {
		t.Fatalf("collector refusing: exit %d, want %d; stderr %s", code, exitError, &stderr)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(logPath), telemetry.CursorName)); err == nil {
		t.Fatal("a position was saved though nothing was acknowledged")
	}
	rc.Mu.Lock()
	rc.Status = http.StatusOK
	rc.Mu.Unlock()
	stderr.Reset()
	for range 2 { // the second run finds nothing new
		if code := run(context.Background(), args, &stderr); code != exitOK {
			t.Fatalf("exit %d; stderr %s", code, &stderr)
		}
	}
	if !slices.Equal(rc.Got, want) {
		t.Errorf("received %q\nwant %q", rc.Got, want)
	}
	if len(rc.Res) == 0 || rc.Res[0] != "agent-shim" {
		t.Errorf("service.name %q, want agent-shim", rc.Res)
	}
}

// TestConfigSection: config.json's agentShim.telemetry alone (no OTEL_
// variable) sends the records to its endpoint with its headers; the
// standard variables, when set, win over it key by key.
func TestConfigSection(t *testing.T) {
	retry = otlploghttp.RetryConfig{Enabled: false}
	dir := t.TempDir()
	for _, k := range []string{"HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, filepath.Join(dir, k))
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS",
		"OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME"} {
		t.Setenv(k, "")
	}
	fromConfig, fromEnv := &otlptest.Receiver{Status: http.StatusOK}, &otlptest.Receiver{Status: http.StatusOK}
	srv1, srv2 := httptest.NewServer(fromConfig), httptest.NewServer(fromEnv)
	defer srv1.Close()
	defer srv2.Close()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"agentShim": {"telemetry": {"endpoint": "`+srv1.URL+`/", "protocol": "http/protobuf", "headers": {"Authorization": "Bearer from-config"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "state", decisionlog.FileName)
	w := decisionlog.NewWriter(logPath, decisionlog.Options{})
	w.Log(decisionlog.Entry{Time: t0, Agent: "codex", Layer: "hook", Command: "git status", Verdict: "allow"})
	args := []string{"agent-shim-export", "--once", "--log", logPath, "--config", cfg}
	var stderr bytes.Buffer
	if code := run(context.Background(), args, &stderr); code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, &stderr)
	}
	if !slices.Equal(fromConfig.Got, []string{"git status"}) || !slices.Equal(fromConfig.Auth, []string{"Bearer from-config"}) {
		t.Errorf("the section's endpoint got %q with Authorization %q", fromConfig.Got, fromConfig.Auth)
	}

	w.Log(decisionlog.Entry{Time: t0, Agent: "codex", Layer: "hook", Command: "ls", Verdict: "allow"})
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv2.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer from-env")
	if code := run(context.Background(), args, &stderr); code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, &stderr)
	}
	if !slices.Equal(fromEnv.Got, []string{"ls"}) || !slices.Equal(fromEnv.Auth, []string{"Bearer from-env"}) || len(fromConfig.Got) != 1 {
		t.Errorf("with the variables set: they got %q (Authorization %q), the section's endpoint %q", fromEnv.Got, fromEnv.Auth, fromConfig.Got)
	}

	// A bad section: exit 1, the file and the key named.
	if err := os.WriteFile(cfg, []byte(`{"agentShim": {"telemetry": {"protocol": "http/json"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(context.Background(), args, &stderr); code != exitError || !bytes.Contains(stderr.Bytes(), []byte(cfg+": agentShim.telemetry.protocol")) {
		t.Errorf("a bad section: exit %d, stderr %s", code, &stderr)
	}
}
