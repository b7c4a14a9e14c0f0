package modelserver

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func start(t *testing.T, calls ...Call) *Server {
	t.Helper()
	s, err := Start(calls...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// post sends body to the server's path and returns the SSE data lines
// (or the JSON body as one line).
func post(t *testing.T, s *Server, path, body string) []string {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", path, resp.Status)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, d)
		} else if strings.HasPrefix(line, "{") {
			out = append(out, line)
		}
	}
	return out
}

func shell(line string) Call {
	return Call{Tools: []string{"Bash", "shell_command", "run_shell_command"}, Args: func(tool string) map[string]any {
		return map[string]any{"command": line}
	}}
}

// TestLoopback: the server listens on 127.0.0.1 only.
func TestLoopback(t *testing.T) {
	s := start(t)
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	host, _, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	if host != "127.0.0.1" {
		t.Errorf("the server listens on %s, want 127.0.0.1", host)
	}
}

// TestProtocols: each protocol's main loop gets the scripted call first,
// then (with the result) a text answer; a request that offers none of the
// tools, or carries no result after a call, gets text.
func TestProtocols(t *testing.T) {
	for _, tc := range []struct {
		name       string
		path       string
		first      string // the request offering the tool
		withResult string // the request carrying the tool's result
		call       string // what the first answer must hold
	}{
		{"anthropic", "/v1/messages",
			`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`,
			`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"tool_result","content":"ok"}]}]}`,
			`"partial_json":"{\"command\":\"touch x\"}"`},
		{"responses", "/v1/responses",
			`{"tools":[{"type":"function","name":"shell_command"}],"input":[]}`,
			`{"tools":[{"type":"function","name":"shell_command"}],"input":[{"type":"function_call_output","output":"ok"}]}`,
			`"arguments":"{\"command\":\"touch x\"}"`},
		{"gemini", "/v1beta/models/g:streamGenerateContent",
			`{"contents":[{"role":"user","parts":[{"text":"go"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`,
			`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"ok"}}}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`,
			`"functionCall":{"args":{"command":"touch x"},"name":"run_shell_command"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, shell("touch x"))
			// A result before any call was made is not the main loop.
			if got := strings.Join(post(t, s, tc.path, tc.withResult), "\n"); strings.Contains(got, "touch x") {
				t.Errorf("a request with a result before the call got the call:\n%s", got)
			}
			if s.Called() {
				t.Fatal("Called before the call was sent")
			}
			if got := strings.Join(post(t, s, tc.path, tc.first), "\n"); !strings.Contains(got, tc.call) {
				t.Errorf("first request: no %s in\n%s", tc.call, got)
			}
			if !s.Called() {
				t.Error("Called is false after the call was sent")
			}
			if got := strings.Join(post(t, s, tc.path, tc.withResult), "\n"); !strings.Contains(got, FinalAnswer) || strings.Contains(got, "touch x") {
				t.Errorf("after the result: want the final answer only, got\n%s", got)
			}
			if !s.ResultContains("ok") {
				t.Errorf("the tool result was not recorded: %q", s.Results())
			}
			if got := s.CallResults(); len(got) != 1 || !strings.Contains(got[0], "ok") {
				t.Errorf("CallResults %q, want the one result", got)
			}
			if n := len(s.Requests()); n != 3 {
				t.Errorf("%d requests recorded, want 3", n)
			}
		})
	}
}

// TestSchemaAnswer: Gemini CLI's side questions that want JSON of a
// schema get a value of it.
func TestSchemaAnswer(t *testing.T) {
	s := start(t)
	lines := post(t, s, "/v1beta/models/g:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"route"}]}],"generationConfig":{"responseJsonSchema":{"type":"object","properties":{"model_choice":{"type":"string","enum":["flash","pro"]},"n":{"type":"integer"},"ok":{"type":"boolean"}}}}}`)
	if len(lines) != 1 {
		t.Fatalf("want one JSON answer, got %q", lines)
	}
	var resp struct {
		Candidates []struct {
			Content struct {
				Parts []struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(lines[0]), &resp); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(resp.Candidates[0].Content.Parts[0].Text), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model_choice": "flash", "n": 1.0, "ok": false}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("schema answer %v, want %v", got, want)
	}
}

// TestUnscripted: a path the server does not know is a 404, recorded as
// unscripted.
func TestUnscripted(t *testing.T) {
	s := start(t)
	resp, err := http.Get(s.URL() + "/v1/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1/elsewhere: %s, want 404", resp.Status)
	}
	if r := s.Requests(); len(r) != 1 || r[0].Scripted {
		t.Errorf("requests %+v, want one unscripted", r)
	}
}
