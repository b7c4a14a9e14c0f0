//go:build otel

package otelcol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/telemetry"
)

// build builds agent-shim and agent-shim-export from this module and the
// collector from its own, into dir.
func build(t *testing.T, dir string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*exec.Cmd{
		exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/agent-shim", "./cmd/agent-shim-export"),
		exec.Command("go", "build", "-o", filepath.Join(dir, "otelcol"), "."),
	} {
		c.Dir = root
		if c.Args[len(c.Args)-1] == "." {
			c.Dir = filepath.Join(root, "e2e", "otelcol", "collector")
		}
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v in %s: %v\n%s", c.Args, c.Dir, err, out)
		}
		t.Logf("built %s in %v", c.Dir, time.Since(start).Round(time.Second))
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// collector is a running collector writing what it receives to out.
type collector struct {
	cmd *exec.Cmd
	out string
}

func startCollector(t *testing.T, bin, dir string, port int, protocol, name string) *collector {
	t.Helper()
	out := filepath.Join(dir, name+".jsonl")
	cfg := filepath.Join(dir, name+".yaml")
	yaml := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      %s:
        endpoint: 127.0.0.1:%d
exporters:
  file:
    path: %s
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [file]
`, map[string]string{"grpc": "grpc", "http/protobuf": "http"}[protocol], port, out)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &collector{cmd: exec.Command(filepath.Join(bin, "otelcol"), "--config", cfg), out: out}
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.stop(); logf.Close() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.Close()
			return c
		}
		if time.Now().After(deadline) {
			data, _ := os.ReadFile(logf.Name())
			t.Fatalf("the collector does not listen on %d: %v\n%s", port, err, data)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *collector) stop() {
	if c.cmd.ProcessState != nil {
		return
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// received reads the records the collectors wrote: each record's
// attributes (string values; others as JSON), and its resource's.
func received(t *testing.T, files ...string) []map[string]string {
	t.Helper()
	var recs []map[string]string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var doc struct {
				ResourceLogs []struct {
					Resource struct {
						Attributes []kv `json:"attributes"`
					} `json:"resource"`
					ScopeLogs []struct {
						LogRecords []struct {
							EventName  string `json:"eventName"`
							Attributes []kv   `json:"attributes"`
						} `json:"logRecords"`
					} `json:"scopeLogs"`
				} `json:"resourceLogs"`
			}
			if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
				continue // a line the collector is still writing
			}
			for _, rl := range doc.ResourceLogs {
				for _, sl := range rl.ScopeLogs {
					for _, lr := range sl.LogRecords {
						m := map[string]string{"eventName": lr.EventName}
						for _, a := range rl.Resource.Attributes {
							m["resource."+a.Key] = a.value()
						}
						for _, a := range lr.Attributes {
							m[a.Key] = a.value()
						}
						recs = append(recs, m)
					}
				}
			}
		}
	}
	return recs
}

type kv struct {
	Key   string                     `json:"key"`
	Value map[string]json.RawMessage `json:"value"`
}

func (a kv) value() string {
	if v, ok := a.Value["stringValue"]; ok {
		var s string
		json.Unmarshal(v, &s)
		return s
	}
	for _, v := range a.Value {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s // intValue is a JSON string in OTLP/JSON
		}
		return string(v)
	}
	return ""
}

// call is one hook call of claude-code.
type call struct {
	session, id, command string
}

// hook runs the hook for c with env and returns its answer and how long
// it took.
func hook(t *testing.T, bin string, env []string, cwd string, c call) (string, time.Duration) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{
		"session_id": c.session, "tool_use_id": c.id, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]string{"command": c.command},
		"cwd": cwd, "permission_mode": "default",
	})
	cmd := exec.Command(filepath.Join(bin, "agent-shim"), "hook", "claude-code")
	cmd.Env, cmd.Dir, cmd.Stdin = env, cwd, bytes.NewReader(in)
	var out, errout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errout
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("hook %q: %v\n%s", c.command, err, &errout)
	}
	return out.String(), took
}

// TestCollector: decisions of hook calls reach a real collector with
// their attributes and the agent's ids, over OTLP/HTTP and OTLP/gRPC;
// with the collector down the verdicts are the same and as quick, and
// once it is back every record arrives.
func TestCollector(t *testing.T) {
	bin := t.TempDir()
	build(t, bin)
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(protocol, "/", "-"), func(t *testing.T) { testCollector(t, bin, protocol, false) })
	}
	// Configured by config.json's agentShim.telemetry alone: no OTEL_
	// variable is set for the hook (and so for the exporter it starts).
	t.Run("config-section", func(t *testing.T) { testCollector(t, bin, "grpc", true) })
}

func testCollector(t *testing.T, bin, protocol string, viaConfig bool) {
	work := t.TempDir()
	port := freePort(t)
	home, project := filepath.Join(work, "home"), filepath.Join(work, "project")
	for _, d := range []string{home, project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_STATE_HOME=" + filepath.Join(work, "state"), "XDG_CONFIG_HOME=" + filepath.Join(work, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(work, "cache"), "XDG_DATA_HOME=" + filepath.Join(work, "data"),
		"XDG_RUNTIME_DIR=" + filepath.Join(work, "run"),
	}
	exporting := append(base[:len(base):len(base)],
		fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", port),
		"OTEL_BLRP_SCHEDULE_DELAY=1000", "OTEL_EXPORTER_OTLP_PROTOCOL="+protocol,
		"OTEL_RESOURCE_ATTRIBUTES=host.name=laptop-7,team=infra")
	if viaConfig {
		exporting = base
	}
	logPath := filepath.Join(work, "state", "agent-shim", decisionlog.FileName)
	t.Cleanup(func() { waitExporter(t, logPath) })

	commands := []string{"git status", "git push --force origin main", "ls -la", "rm -rf /"}
	calls := func(phase string) []call {
		var cs []call
		for i, c := range commands {
			cs = append(cs, call{session: "sess-" + phase, id: fmt.Sprintf("toolu_%s_%d", phase, i), command: c})
		}
		return cs
	}
	// The verdicts without export: what every later phase must answer.
	want := map[string]string{}
	var slowest time.Duration
	for _, c := range calls("base") {
		out, took := hook(t, bin, base, project, c)
		want[c.command] = out
		slowest = max(slowest, took)
	}
	t.Logf("without export: slowest hook call %v", slowest)
	var all []call
	check := func(phase string, env []string, spacing time.Duration) {
		slowest := time.Duration(0)
		for _, c := range calls(phase) {
			out, took := hook(t, bin, env, project, c)
			if out != want[c.command] {
				t.Errorf("%s: %q answered %q, without export %q", phase, c.command, out, want[c.command])
			}
			slowest = max(slowest, took)
			all = append(all, c)
			time.Sleep(spacing)
		}
		t.Logf("%s: slowest hook call %v", phase, slowest)
		if slowest > 5*time.Second {
			t.Errorf("%s: a hook call took %v", phase, slowest)
		}
	}

	if viaConfig {
		// The agent's config.json (the hook's default, $HOME/.gemini/config)
		// gets the section only now: the verdicts above are without it.
		cfg := filepath.Join(home, ".gemini", "config", "config.json")
		if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
			t.Fatal(err)
		}
		section := fmt.Sprintf(`{"agentShim": {"telemetry": {"endpoint": "http://127.0.0.1:%d", "protocol": %q, "interval": "1s"}}}`, port, protocol)
		if err := os.WriteFile(cfg, []byte(section+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// A hook takes a changed config.json up when the stamp the calls
		// above left is due (at most the default interval from them).
		fi, err := os.Stat(filepath.Join(filepath.Dir(logPath), telemetry.StampName))
		if err != nil {
			t.Fatalf("the calls without export left no stamp: %v", err)
		}
		if wait := time.Until(fi.ModTime()); wait > 0 && wait <= telemetry.DefaultInterval {
			t.Logf("waiting %v for the stamp to be due", wait.Round(time.Millisecond))
			time.Sleep(wait)
		}
	}
	c1 := startCollector(t, bin, work, port, protocol, "up")
	check("up", exporting, 0)
	waitFor(t, "the first records", func() bool { return len(received(t, c1.out)) >= len(commands) })
	c1.stop()
	check("down", exporting, 1100*time.Millisecond) // each interval's kick finds the collector down
	getenv := func(k string) string {
		for _, kv := range exporting {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	if _, err := os.Stat(telemetry.StampPath(getenv, logPath)); err != nil {
		t.Fatalf("no exporter was started: %v", err)
	}
	time.Sleep(2 * time.Second) // an exporter or two has tried and failed
	c2 := startCollector(t, bin, work, port, protocol, "back")
	check("back", exporting, 1100*time.Millisecond)

	// Every decision of every phase arrives (base ones too: the log is
	// the queue), with its attributes.
	logged := map[string]decisionlog.Entry{}
	var ids map[string]string
	waitFor(t, "every record", func() bool {
		got := byCall(received(t, c1.out, c2.out))
		for _, c := range append(calls("base"), all...) {
			if _, ok := got[c.session+"\x00"+c.command]; !ok {
				return false
			}
		}
		return true
	})
	entries, _, err := decisionlog.Read(logPath, 2)
	if err != nil {
		t.Fatal(err)
	}
	ids = toolUseIDs(t, logPath)
	for _, e := range entries {
		logged[e.Session+"\x00"+e.Command] = e
	}
	for _, c := range calls("down") {
		if _, ok := byCall(received(t, c1.out))[c.session+"\x00"+c.command]; ok {
			t.Errorf("%q logged while the collector was down reached it", c.command)
		}
	}
	got := byCall(received(t, c1.out, c2.out))
	for _, c := range append(calls("base"), all...) {
		key := c.session + "\x00" + c.command
		r, e := got[key], logged[key]
		t.Logf("%s %q: %v", c.session, c.command, r)
		want := map[string]string{
			"eventName": "agent_shim.tool_decision", "event.name": "agent_shim.tool_decision",
			"session.id": c.session, "tool_name": "Bash", "agent": "claude-code", "layer": "hook",
			"decision": e.Verdict, "command": c.command, "cwd": project,
			"resource.service.name": "agent-shim", "resource.host.name": "laptop-7", "resource.team": "infra",
		}
		if viaConfig { // OTEL_RESOURCE_ATTRIBUTES is not set
			delete(want, "resource.host.name")
			delete(want, "resource.team")
		}
		for k, v := range want {
			if r[k] != v {
				t.Errorf("%s %q: %s = %q, want %q", c.session, c.command, k, r[k], v)
			}
		}
		// The agent's tool_use_id, when the local log holds it.
		if id := ids[key]; id != "" && r["tool_use_id"] != id {
			t.Errorf("%s %q: tool_use_id = %q, the log holds %q", c.session, c.command, r["tool_use_id"], id)
		}
		if e.Rule != nil && (r["rule.text"] != e.Rule.Text || r["source"] != "rule" || r["rule.category"] != e.Rule.Category) {
			t.Errorf("%s %q: rule %v, the log holds %+v", c.session, c.command, r, e.Rule)
		}
	}
	if v := got["sess-up\x00git push --force origin main"]["decision"]; v != "deny" {
		t.Errorf("git push --force: decision %q, want deny", v)
	}
}

// byCall indexes records by session and command.
func byCall(recs []map[string]string) map[string]map[string]string {
	m := map[string]map[string]string{}
	for _, r := range recs {
		m[r["session.id"]+"\x00"+r["command"]] = r
	}
	return m
}

// toolUseIDs reads the tool_use_id each log line holds, if any.
func toolUseIDs(t *testing.T, logPath string) map[string]string {
	ids := map[string]string{}
	for _, p := range decisionlog.Files(logPath, 2) {
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			var l struct {
				Session   string `json:"session"`
				Command   string `json:"command"`
				ToolUseID string `json:"tool_use_id"`
			}
			if json.Unmarshal([]byte(line), &l) == nil {
				ids[l.Session+"\x00"+l.Command] = l.ToolUseID
			}
		}
	}
	return ids
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 90s for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitExporter waits for the detached exporter to leave (it leaves three
// intervals after the last record), so that nothing outlives the test.
func waitExporter(t *testing.T, logPath string) {
	lock := flock.New(filepath.Join(filepath.Dir(logPath), telemetry.LockName))
	deadline := time.Now().Add(60 * time.Second)
	for free := 0; free < 2; time.Sleep(time.Second) { // free twice: one started last may not hold it yet
		if time.Now().After(deadline) {
			t.Errorf("the exporter was still running after 60s")
			return
		}
		if ok, err := lock.TryLock(); err == nil && ok {
			lock.Unlock()
			free++
		} else {
			free = 0
		}
	}
}
