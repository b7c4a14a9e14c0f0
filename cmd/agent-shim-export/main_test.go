package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/telemetry"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func TestAttributes(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   telemetry.Record
		want map[string]any
	}{
		{
			name: "rule",
			in: telemetry.Record{ToolUseID: "toolu_01A", Entry: decisionlog.Entry{
				Time: t0, Agent: "claude-code", Session: "sess-1", Layer: "hook", Cwd: "/src/p", Tool: "Bash",
				Command: "git push --force", Verdict: "deny", Reason: "never allowed",
				Rule: &decisionlog.Rule{Text: "git push --force", List: "deny", Category: "never_allow", Overlay: ".", File: ".agents/config/permissions/never_allow.txt", Line: 3},
			}},
			want: map[string]any{
				"event.name": EventName, "event.timestamp": "2026-12-01T10:00:00Z",
				"decision": "deny", "source": "rule", "session.id": "sess-1", "tool_name": "Bash", "tool_use_id": "toolu_01A",
				"agent": "claude-code", "layer": "hook", "cwd": "/src/p", "command": "git push --force", "reason": "never allowed",
				"rule.text": "git push --force", "rule.list": "deny", "rule.category": "never_allow", "rule.overlay": ".",
				"rule.file": ".agents/config/permissions/never_allow.txt", "rule.line": int64(3),
			},
		},
		{
			name: "floor",
			in: telemetry.Record{Entry: decisionlog.Entry{
				Time: t0, Layer: "runtime", Tool: "execve", Command: "curl -H 'Authorization: ***'", Argv: []string{"curl", "-H", "Authorization: ***"},
				Verdict: "ask", Floor: "network",
			}},
			want: map[string]any{
				"event.name": EventName, "event.timestamp": "2026-12-01T10:00:00Z",
				"decision": "ask", "source": "floor", "tool_name": "execve", "layer": "runtime",
				"command": "curl -H 'Authorization: ***'", "argv": []string{"curl", "-H", "Authorization: ***"}, "floor": "network",
			},
		},
		{
			name: "answer",
			in: telemetry.Record{Entry: decisionlog.Entry{
				Time: t0, Layer: "shell", Command: "make", Verdict: "allow", Answer: "session", Floor: "no rule matches",
			}},
			want: map[string]any{
				"event.name": EventName, "event.timestamp": "2026-12-01T10:00:00Z",
				"decision": "allow", "source": "user_session", "layer": "shell", "command": "make", "answer": "session", "floor": "no rule matches",
			},
		},
		{
			name: "lost",
			in:   telemetry.Record{Entry: decisionlog.Entry{Time: t0, Layer: "hook", Command: "ls", Verdict: "allow", Lost: 4}},
			want: map[string]any{
				"event.name": EventName, "event.timestamp": "2026-12-01T10:00:00Z",
				"decision": "allow", "source": "default", "layer": "hook", "command": "ls", "lost": int64(4),
			},
		},
		{
			name: "default",
			in:   telemetry.Record{Entry: decisionlog.Entry{Time: t0, Layer: "gate", Command: "x", Verdict: "default"}},
			want: map[string]any{
				"event.name": EventName, "event.timestamp": "2026-12-01T10:00:00Z",
				"decision": "default", "source": "default", "layer": "gate", "command": "x",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]any{}
			for _, kv := range attributes(tc.in) {
				if _, dup := got[string(kv.Key)]; dup {
					t.Errorf("attribute %s twice", kv.Key)
				}
				got[string(kv.Key)] = kv.Value.AsInterface()
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("attributes (-want +got):\n%s", d)
			}
		})
	}
}

// receiver is a minimal OTLP/HTTP logs endpoint (not a collector): it
// answers with status, and keeps the records of the requests it accepts.
type receiver struct {
	mu     sync.Mutex
	status int
	got    []string // the command attribute of each record accepted
	ids    []string
	res    []string // service.name of each resource
	auth   []string // the Authorization header of each request
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.auth = append(rc.auth, r.Header.Get("Authorization"))
	if r.URL.Path != "/v1/logs" || rc.status != http.StatusOK {
		w.WriteHeader(max(rc.status, http.StatusNotFound))
		return
	}
	var req collogs.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, rl := range req.ResourceLogs {
		for _, a := range rl.Resource.GetAttributes() {
			if a.Key == "service.name" {
				rc.res = append(rc.res, a.Value.GetStringValue())
			}
		}
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				for _, a := range lr.Attributes {
					switch a.Key {
					case "command":
						rc.got = append(rc.got, a.Value.GetStringValue())
					case "tool_use_id":
						rc.ids = append(rc.ids, a.Value.GetStringValue())
					}
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// TestExportResume: a collector that refuses gets nothing acknowledged
// and the position stays; once it accepts, every record arrives, once.
func TestExportResume(t *testing.T) {
	retry = otlploghttp.RetryConfig{Enabled: false}
	dir := t.TempDir()
	for _, k := range []string{"HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, filepath.Join(dir, k))
	}
	rc := &receiver{status: http.StatusServiceUnavailable}
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
	rc.mu.Lock()
	rc.status = http.StatusOK
	rc.mu.Unlock()
	stderr.Reset()
	for range 2 { // the second run finds nothing new
		if code := run(context.Background(), args, &stderr); code != exitOK {
			t.Fatalf("exit %d; stderr %s", code, &stderr)
		}
	}
	if !slices.Equal(rc.got, want) {
		t.Errorf("received %q\nwant %q", rc.got, want)
	}
	if len(rc.res) == 0 || rc.res[0] != "agent-shim" {
		t.Errorf("service.name %q, want agent-shim", rc.res)
	}
}

func TestProtocol(t *testing.T) {
	for _, tc := range []struct {
		logs, all string
		ok        bool
	}{
		{"", "", true},
		{"", "http/protobuf", true},
		{"", "grpc", true},
		{"grpc", "http/json", true}, // the logs variable wins
		{"", "http/json", false},    // the Go SDK has no OTLP/JSON exporter
		{"http/json", "grpc", false},
		{"", "udp", false},
	} {
		t.Logf("input: OTEL_EXPORTER_OTLP_LOGS_PROTOCOL=%q OTEL_EXPORTER_OTLP_PROTOCOL=%q", tc.logs, tc.all)
		env := map[string]string{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": tc.logs, "OTEL_EXPORTER_OTLP_PROTOCOL": tc.all}
		exp, err := newExporter(context.Background(), telemetry.Resolve(func(k string) string { return env[k] }, nil))
		if (err == nil) != tc.ok {
			t.Errorf("err = %v, want ok %v", err, tc.ok)
		}
		if exp != nil {
			exp.Shutdown(context.Background())
		}
	}
}

// TestIdle: a lingering exporter leaves after idle with nothing new, even
// when the interval is longer (it must not outlive its purpose by an
// interval of an hour).
func TestIdle(t *testing.T) {
	retry = otlploghttp.RetryConfig{Enabled: false}
	srv := httptest.NewServer(&receiver{status: http.StatusOK})
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	logPath := filepath.Join(t.TempDir(), "state", decisionlog.FileName)
	decisionlog.NewWriter(logPath, decisionlog.Options{}).Log(decisionlog.Entry{Layer: "hook", Command: "ls", Verdict: "allow"})
	start := time.Now()
	if err := export(context.Background(), logPath, false, 300*time.Millisecond, telemetry.Settings{Interval: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the exporter stayed %v with idle 300ms", took)
	}
}

// TestCollectorBack: an exporter that finds the collector down stays and
// delivers once it is back, without another start.
func TestCollectorBack(t *testing.T) {
	retry = otlploghttp.RetryConfig{Enabled: false}
	rc := &receiver{status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	logPath := filepath.Join(t.TempDir(), "state", decisionlog.FileName)
	decisionlog.NewWriter(logPath, decisionlog.Options{}).Log(decisionlog.Entry{Layer: "hook", Command: "git status", Verdict: "allow"})
	done := make(chan error, 1)
	go func() {
		done <- export(context.Background(), logPath, false, 500*time.Millisecond, telemetry.Settings{Interval: 50 * time.Millisecond})
	}()
	time.Sleep(700 * time.Millisecond) // down for longer than idle
	rc.mu.Lock()
	rc.status = http.StatusOK
	rc.mu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the exporter did not leave")
	}
	if !slices.Equal(rc.got, []string{"git status"}) {
		t.Errorf("received %q", rc.got)
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
	fromConfig, fromEnv := &receiver{status: http.StatusOK}, &receiver{status: http.StatusOK}
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
	if !slices.Equal(fromConfig.got, []string{"git status"}) || !slices.Equal(fromConfig.auth, []string{"Bearer from-config"}) {
		t.Errorf("the section's endpoint got %q with Authorization %q", fromConfig.got, fromConfig.auth)
	}

	w.Log(decisionlog.Entry{Time: t0, Agent: "codex", Layer: "hook", Command: "ls", Verdict: "allow"})
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv2.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer from-env")
	if code := run(context.Background(), args, &stderr); code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, &stderr)
	}
	if !slices.Equal(fromEnv.got, []string{"ls"}) || !slices.Equal(fromEnv.auth, []string{"Bearer from-env"}) || len(fromConfig.got) != 1 {
		t.Errorf("with the variables set: they got %q (Authorization %q), the section's endpoint %q", fromEnv.got, fromEnv.auth, fromConfig.got)
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
