package otlp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/otlp/otlptest"
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
		exp, err := NewExporter(context.Background(), telemetry.Resolve(func(k string) string { return env[k] }, nil), DefaultRetry)
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
	srv := httptest.NewServer(&otlptest.Receiver{Status: http.StatusOK})
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	logPath := filepath.Join(t.TempDir(), "state", decisionlog.FileName)
	decisionlog.NewWriter(logPath, decisionlog.Options{}).Log(decisionlog.Entry{Layer: "hook", Command: "ls", Verdict: "allow"})
	start := time.Now()
	if err := Export(context.Background(), Job{Log: logPath, Idle: 300 * time.Millisecond, Settings: telemetry.Settings{Interval: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the exporter stayed %v with idle 300ms", took)
	}
}

// TestCollectorBack: an exporter that finds the collector down stays and
// delivers once it is back, without another start.
func TestCollectorBack(t *testing.T) {
	rc := &otlptest.Receiver{Status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	logPath := filepath.Join(t.TempDir(), "state", decisionlog.FileName)
	decisionlog.NewWriter(logPath, decisionlog.Options{}).Log(decisionlog.Entry{Layer: "hook", Command: "git status", Verdict: "allow"})
	done := make(chan error, 1)
	go func() {
		done <- Export(context.Background(), Job{Log: logPath, Idle: 500 * time.Millisecond, Settings: telemetry.Settings{Interval: 50 * time.Millisecond}})
	}()
	time.Sleep(700 * time.Millisecond) // down for longer than idle
	rc.Mu.Lock()
	rc.Status = http.StatusOK
	rc.Mu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the exporter did not leave")
	}
	if !slices.Equal(rc.Got, []string{"git status"}) {
		t.Errorf("received %q", rc.Got)
	}
}
