//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// modelServer is a scripted model API on 127.0.0.1 that speaks the three
// agents' wire protocols, one per path:
//
//   - Anthropic Messages (Claude Code, ANTHROPIC_BASE_URL): POST
//     /v1/messages, streamed as SSE message_start, content_block_start
//     (a tool_use block), content_block_delta (input_json_delta),
//     content_block_stop, message_delta (stop_reason tool_use),
//     message_stop;
//   - OpenAI Responses (Codex, wire_api = "responses"): POST /v1/responses,
//     streamed as SSE response.created, response.output_item.done (a
//     function_call item) and response.completed;
//   - Gemini (GOOGLE_GEMINI_BASE_URL): POST
//     /v1beta/models/M:streamGenerateContent?alt=sse, each SSE data line a
//     GenerateContentResponse whose part is a functionCall.
//
// The first request of the agent's main loop (the one that offers the
// scripted tool) gets the first tool call, each request carrying a tool's
// result the next call while there is one; every other request (after the
// last result; titles, routing, token counts) gets a short text answer,
// and a side question that wants JSON of a schema gets a value of it.
// Every request is recorded, so a test can check what the hook said
// reached the model.
type modelServer struct {
	t     testing.TB
	srv   *httptest.Server
	calls []toolCall

	mu   sync.Mutex
	reqs []request
	sent int // calls sent
}

// toolCall is a tool call the model makes: the tool's name in each
// protocol is looked up from the request's tool list by the names given.
type toolCall struct {
	// tools are the tool names to look for, first match wins (Claude: Bash;
	// Codex: shell_command, exec_command, shell; Gemini: run_shell_command).
	tools []string
	// args builds the arguments for the tool found.
	args func(tool string) map[string]any
}

type request struct {
	Path string
	Body string
}

const finalAnswer = "e2e: done"

func newModelServer(t testing.TB, calls ...toolCall) *modelServer {
	m := &modelServer{t: t, calls: calls}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// URL is the server's base URL, http://127.0.0.1:PORT.
func (m *modelServer) URL() string { return m.srv.URL }

// requests returns a copy of the recorded requests.
func (m *modelServer) requests() []request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]request(nil), m.reqs...)
}

// toolCalled reports whether every scripted tool call was sent.
func (m *modelServer) toolCalled() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sent == len(m.calls)
}

func (m *modelServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, request{Path: r.URL.String(), Body: string(body)})
	m.mu.Unlock()
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 10})
	case strings.HasSuffix(p, "/messages"):
		m.anthropic(w, body)
	case strings.HasSuffix(p, "/responses"):
		m.responses(w, body)
	case strings.HasSuffix(p, "/models") || strings.Contains(p, "/models/") && r.Method == http.MethodGet:
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	case strings.HasSuffix(p, ":streamGenerateContent"):
		m.gemini(w, body, true)
	case strings.HasSuffix(p, ":generateContent"):
		m.gemini(w, body, false)
	case strings.HasSuffix(p, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 10})
	default:
		m.t.Logf("model server: %s %s: not scripted", r.Method, r.URL)
		http.NotFound(w, r)
	}
}

// next decides the answer to a main-loop request: the next tool call (its
// name, arguments and id) when the request offers the tool and carries a
// result exactly when a call was sent before, else "" for a text answer.
func (m *modelServer) next(offered []string, hasResult bool) (string, map[string]any, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sent == len(m.calls) || hasResult != (m.sent > 0) {
		return "", nil, ""
	}
	c := m.calls[m.sent]
	for _, want := range c.tools {
		for _, o := range offered {
			if o == want {
				m.sent++
				return o, c.args(o), fmt.Sprintf("e2e_%d", m.sent)
			}
		}
	}
	return "", nil, ""
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events: name (omitted when "") and data.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (s sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	var buf bytes.Buffer
	if name != "" {
		fmt.Fprintf(&buf, "event: %s\n", name)
	}
	fmt.Fprintf(&buf, "data: %s\n\n", b)
	s.w.Write(buf.Bytes())
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// anthropic answers a Messages API request.
func (m *modelServer) anthropic(w http.ResponseWriter, body []byte) {
	var req struct {
		Model    string                  `json:"model"`
		Stream   bool                    `json:"stream"`
		Tools    []struct{ Name string } `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var offered []string
	for _, t := range req.Tools {
		offered = append(offered, t.Name)
	}
	// Any result, not only in the last message: Claude Code may append a
	// note of its own after the results.
	hasResult := false
	for _, msg := range req.Messages {
		hasResult = hasResult || bytes.Contains(msg.Content, []byte(`"tool_result"`))
	}
	tool, args, id := m.next(offered, hasResult)
	usage := map[string]any{"input_tokens": 10, "output_tokens": 1}
	var block map[string]any
	stop := "end_turn"
	if tool != "" {
		block = map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": tool, "input": args}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": finalAnswer}
	}
	msg := map[string]any{"id": "msg_e2e", "type": "message", "role": "assistant", "model": req.Model,
		"stop_reason": nil, "stop_sequence": nil, "usage": usage, "content": []any{}}
	if !req.Stream {
		msg["content"] = []any{block}
		msg["stop_reason"] = stop
		writeJSON(w, msg)
		return
	}
	s := newSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": msg})
	if tool != "" {
		in, _ := json.Marshal(args)
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": tool, "input": map[string]any{}}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
	} else {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": finalAnswer}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// responses answers a Responses API request (always streamed: Codex sets
// "stream": true).
func (m *modelServer) responses(w http.ResponseWriter, body []byte) {
	var req struct {
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var offered []string
	for _, t := range req.Tools {
		offered = append(offered, t.Name)
	}
	hasResult := false
	for _, it := range req.Input {
		if it["type"] == "function_call_output" {
			hasResult = true
		}
	}
	tool, args, id := m.next(offered, hasResult)
	var item map[string]any
	if tool != "" {
		a, _ := json.Marshal(args)
		item = map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": tool,
			"arguments": string(a), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": "msg_e2e_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": finalAnswer, "annotations": []any{}}}}
	}
	s := newSSE(w)
	s.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_e2e"}})
	s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	s.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": "resp_e2e", "usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}})
}

// gemini answers generateContent and streamGenerateContent.
func (m *modelServer) gemini(w http.ResponseWriter, body []byte, stream bool) {
	var req struct {
		Contents []struct {
			Role  string           `json:"role"`
			Parts []map[string]any `json:"parts"`
		} `json:"contents"`
		GenerationConfig struct {
			ResponseMimeType   string         `json:"responseMimeType"`
			ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
			ResponseSchema     map[string]any `json:"responseSchema"`
		} `json:"generationConfig"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var offered []string
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			offered = append(offered, f.Name)
		}
	}
	hasResult := false
	if n := len(req.Contents); n > 0 {
		for _, p := range req.Contents[n-1].Parts {
			if _, ok := p["functionResponse"]; ok {
				hasResult = true
			}
		}
	}
	var part map[string]any
	tool, args, _ := m.next(offered, hasResult)
	gc := req.GenerationConfig
	if schema := gc.ResponseJSONSchema; tool == "" && (schema != nil || gc.ResponseSchema != nil) {
		// Gemini CLI's side questions (routing, next speaker) want JSON
		// of a schema: the first of each enum, 1, false, "e2e".
		if schema == nil {
			schema = gc.ResponseSchema
		}
		b, _ := json.Marshal(fillSchema(schema))
		part = map[string]any{"text": string(b)}
	} else if tool != "" {
		part = map[string]any{"functionCall": map[string]any{"name": tool, "args": args}}
	} else {
		part = map[string]any{"text": finalAnswer}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-e2e",
	}
	if !stream {
		writeJSON(w, resp)
		return
	}
	newSSE(w).event("", resp)
}

// results returns the tool results the agent sent back to the model, as
// text: Anthropic's tool_result blocks, the Responses API's
// function_call_output items and Gemini's functionResponse parts.
func (m *modelServer) results() []string {
	var out []string
	for _, r := range m.requests() {
		var req struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Input    []map[string]json.RawMessage `json:"input"`
			Contents []struct {
				Parts []map[string]json.RawMessage `json:"parts"`
			} `json:"contents"`
		}
		if json.Unmarshal([]byte(r.Body), &req) != nil {
			continue
		}
		for _, msg := range req.Messages {
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(msg.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b.Type == "tool_result" {
					out = append(out, rawText(b.Content))
				}
			}
		}
		for _, it := range req.Input {
			if string(it["type"]) == `"function_call_output"` {
				out = append(out, rawText(it["output"]))
			}
		}
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if fr, ok := p["functionResponse"]; ok {
					out = append(out, rawText(fr))
				}
			}
		}
	}
	return out
}

// rawText is a JSON string's value, else the JSON text itself with its
// strings unescaped as far as a reader needs.
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var sb strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			sb.WriteString(v)
			sb.WriteByte('\n')
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return sb.String()
}

// resultContains reports whether a tool result sent back holds every one
// of subs.
func (m *modelServer) resultContains(subs ...string) bool {
	for _, r := range m.results() {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(r, s)
		}
		if ok {
			return true
		}
	}
	return false
}

// fillSchema builds a value of a JSON schema (Gemini's or JSON Schema's
// spelling): an enum's first value, 1 for numbers, false, "e2e".
func fillSchema(schema map[string]any) any {
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	typ, _ := schema["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		obj := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, v := range props {
			if sub, ok := v.(map[string]any); ok {
				obj[k] = fillSchema(sub)
			}
		}
		return obj
	case "array":
		return []any{}
	case "integer", "number":
		return 1
	case "boolean":
		return false
	}
	return "e2e"
}
