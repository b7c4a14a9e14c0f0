// Package modelserver is a scripted model API for driving the real coding
// agents headless with no model and no network: it listens on the
// loopback interface only, speaks the wire protocols of Claude Code, Codex
// and Gemini CLI, and answers each agent's main loop with the tool calls
// it was given, one per turn, then with a short text. The end-to-end
// tests and `agent-shim verify` drive the agents against it and judge what
// ran by the disk; the server records every request, so that they can also
// see what reached the model (the tool results).
//
// The protocols, one per path:
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
package modelserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is a scripted model API on 127.0.0.1.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}

	mu    sync.Mutex
	calls []Call
	reqs  []Request
	sent  int // calls sent
}

// Call is a tool call the model makes: the tool's name in each protocol
// is looked up from the request's tool list by the names given.
type Call struct {
	// Tools are the tool names to look for, first match wins (Claude: Bash;
	// Codex: shell_command, exec_command, shell; Gemini: run_shell_command).
	Tools []string
	// Args builds the arguments for the tool found.
	Args func(tool string) map[string]any
}

// Request is one request the server received.
type Request struct {
	Path string
	Body string
	// Scripted is false for a request the server has no answer for (404).
	Scripted bool
}

// FinalAnswer is the model's text once the calls are made.
const FinalAnswer = "e2e: done"

// Start starts a server on 127.0.0.1 (an ephemeral port) that makes calls
// in turn. Close stops it.
func Start(calls ...Call) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the model server: %w", err)
	}
	s := &Server{ln: ln, calls: calls, done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 30 * time.Second}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	return s, nil
}

// URL is the server's base URL, http://127.0.0.1:PORT.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and waits for it: open streams are cut.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	<-s.done
	return err
}

// SetCalls replaces the calls still to make (and the count of those
// made): for a caller that learns them after the agent's setup, which
// needs the server's URL.
func (s *Server) SetCalls(calls ...Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls, s.sent = calls, 0
}

// Requests returns a copy of the recorded requests.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Called reports whether every scripted tool call was sent.
func (s *Server) Called() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent == len(s.calls)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	// Loopback only, by the listener; a request from elsewhere (a
	// forwarded port) is refused all the same.
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err != nil || !net.ParseIP(host).IsLoopback() {
		http.Error(w, "loopback only", http.StatusForbidden)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	scripted := true
	defer func() {
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{Path: r.URL.String(), Body: string(body), Scripted: scripted})
		s.mu.Unlock()
	}()
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 10})
	case strings.HasSuffix(p, "/messages"):
		s.anthropic(w, body)
	case strings.HasSuffix(p, "/responses"):
		s.responses(w, body)
	case strings.HasSuffix(p, "/models") || strings.Contains(p, "/models/") && r.Method == http.MethodGet:
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	case strings.HasSuffix(p, ":streamGenerateContent"):
		s.gemini(w, body, true)
	case strings.HasSuffix(p, ":generateContent"):
		s.gemini(w, body, false)
	case strings.HasSuffix(p, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 10})
	default:
		scripted = false
		http.NotFound(w, r)
	}
}

// next decides the answer to a main-loop request: the next tool call (its
// name, arguments and id) when the request offers the tool and carries a
// result exactly when a call was sent before, else "" for a text answer.
func (s *Server) next(offered []string, hasResult bool) (string, map[string]any, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent == len(s.calls) || hasResult != (s.sent > 0) {
		return "", nil, ""
	}
	c := s.calls[s.sent]
	for _, want := range c.Tools {
		for _, o := range offered {
			if o == want {
				s.sent++
				return o, c.Args(o), fmt.Sprintf("e2e_%d", s.sent)
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
func (s *Server) anthropic(w http.ResponseWriter, body []byte) {
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
	tool, args, id := s.next(offered, hasResult)
	usage := map[string]any{"input_tokens": 10, "output_tokens": 1}
	var block map[string]any
	stop := "end_turn"
	if tool != "" {
		block = map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": tool, "input": args}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": FinalAnswer}
	}
	msg := map[string]any{"id": "msg_e2e", "type": "message", "role": "assistant", "model": req.Model,
		"stop_reason": nil, "stop_sequence": nil, "usage": usage, "content": []any{}}
	if !req.Stream {
		msg["content"] = []any{block}
		msg["stop_reason"] = stop
		writeJSON(w, msg)
		return
	}
	ev := newSSE(w)
	ev.event("message_start", map[string]any{"type": "message_start", "message": msg})
	if tool != "" {
		in, _ := json.Marshal(args)
		ev.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": tool, "input": map[string]any{}}})
		ev.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
	} else {
		ev.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		ev.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": FinalAnswer}})
	}
	ev.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	ev.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	ev.event("message_stop", map[string]any{"type": "message_stop"})
}

// responses answers a Responses API request (always streamed: Codex sets
// "stream": true).
func (s *Server) responses(w http.ResponseWriter, body []byte) {
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
	tool, args, id := s.next(offered, hasResult)
	var item map[string]any
	if tool != "" {
		a, _ := json.Marshal(args)
		item = map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": tool,
			"arguments": string(a), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": "msg_e2e_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": FinalAnswer, "annotations": []any{}}}}
	}
	ev := newSSE(w)
	ev.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_e2e"}})
	ev.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	ev.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	ev.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": "resp_e2e", "usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}})
}

// gemini answers generateContent and streamGenerateContent.
func (s *Server) gemini(w http.ResponseWriter, body []byte, stream bool) {
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
	tool, args, _ := s.next(offered, hasResult)
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
		part = map[string]any{"text": FinalAnswer}
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

// Results returns the tool results the agent sent back to the model, as
// text, request by request: Anthropic's tool_result blocks, the Responses
// API's function_call_output items and Gemini's functionResponse parts.
// (A request carries the conversation so far: a result is there once per
// request after it.)
func (s *Server) Results() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, results(r.Body)...)
	}
	return out
}

// CallResults returns the result of each tool call made, in the order of
// the calls: those of the request that carries the most.
func (s *Server) CallResults() []string {
	var out []string
	for _, r := range s.Requests() {
		if res := results(r.Body); len(res) > len(out) {
			out = res
		}
	}
	return out
}

// results returns the tool results a request carries, in order.
func results(body string) []string {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Input    []map[string]json.RawMessage `json:"input"`
		Contents []struct {
			Parts []map[string]json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal([]byte(body), &req) != nil {
		return nil
	}
	var out []string
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

// ResultContains reports whether a tool result sent back holds every one
// of subs.
func (s *Server) ResultContains(subs ...string) bool {
	for _, r := range s.Results() {
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
