package gate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseCallStrict: a hook input that two readers could read as two
// different calls is not decided. Each input names a call whose lax
// reading is harmless (or that decides as allow under a lax reader), and
// ParseCall or Check must refuse it with errMalformed.
func TestParseCallStrict(t *testing.T) {
	proj, _ := project(t)
	file := filepath.Join(proj, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(cwd, rest string) string {
		return `{"session_id":"s","cwd":"` + cwd + `","hook_event_name":"PreToolUse","tool_name":"Bash",` + rest + `}`
	}
	for _, tc := range []struct{ name, in, want string }{
		{"NUL in the command", call(proj, `"tool_input":{"command":"rm -rf /\u0000tmp/x"}`), "\\x00"},
		{"raw CR in the command", call(proj, `"tool_input":{"command":"git status\rrm -rf ~"}`), "\\r"},
		{"NUL in a path", `{"cwd":"` + proj + `","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"a\u0000b"}}`, "\\x00"},
		{"NUL in a patch's path", `{"cwd":"` + proj + `","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Update File: a\u0000b\n"}}`, "\\x00"},
		{"invalid UTF-8", call(proj, "\"tool_input\":{\"command\":\"git status \xff\"}"), "UTF-8"},
		{"lone high surrogate", call(proj, `"tool_input":{"command":"git status \ud800"}`), "surrogate"},
		{"lone low surrogate", call(proj, `"tool_input":{"command":"git status \udc00x"}`), "surrogate"},
		{"high surrogate then a letter", call(proj, `"tool_input":{"command":"\ud800\u0041"}`), "surrogate"},
		{"duplicate command", call(proj, `"tool_input":{"command":"rm -rf /","command":"git status"}`), "duplicate"},
		{"duplicate tool_name", call(proj, `"tool_name":"Read","tool_input":{"command":"rm -rf /"}`), "duplicate"},
		{"duplicate tool_input", call(proj, `"tool_input":{"command":"rm -rf /"},"tool_input":{"command":"ls"}`), "duplicate"},
		{"duplicate hook_event_name", call(proj, `"hook_event_name":"PostToolUse","tool_input":{"command":"ls"}`), "duplicate"},
		{"duplicate deep inside", call(proj, `"tool_input":{"command":"ls","x":[{"a":1,"a":2}]}`), "duplicate"},
		{"two values", call(proj, `"tool_input":{"command":"ls"}`) + ` {}`, "not JSON"},
		{"not JSON", `{"cwd":`, "not JSON"},
		{"no cwd", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "cwd: missing"},
		{"relative cwd", call("proj", `"tool_input":{"command":"ls"}`), "not absolute"},
		{"cwd a file", call(file, `"tool_input":{"command":"ls"}`), "not a directory"},
		{"cwd missing on disk", call(proj+"/nope", `"tool_input":{"command":"ls"}`), "no such file"},
		{"dir_path a file", call(proj, `"tool_input":{"command":"ls","dir_path":"f"}`), "not a directory"},
		{"no tool_name", `{"cwd":"` + proj + `","hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}`, "no tool_name"},
	} {
		t.Logf("input: %q", tc.in)
		c, err := ParseCall([]byte(tc.in))
		if err == nil {
			err = c.Check()
		}
		if !errors.Is(err, errMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want errMalformed …%s…", tc.name, err, tc.want)
		}
	}
	// What is strict but fine passes: surrogate pairs, escapes, nesting.
	for _, in := range []string{
		call(proj, `"tool_input":{"command":"echo \ud83d\ude00 \\u0041 \"x\""}`),
		call(proj, `"tool_input":{"command":"ls","x":[{"a":1},{"a":2}],"y":{"a":{"a":1}}}`),
		`{"cwd":"` + proj + `","hook_event_name":"PreToolUse","tool_name":"mcp__x__y","tool_input":{"q":"a\u0000b"}}`,
	} {
		c, err := ParseCall([]byte(in))
		if err == nil {
			err = c.Check()
		}
		if err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// TestDecideCall decides calls of each tool category through the gate.
func TestDecideCall(t *testing.T) {
	proj, outside := project(t)
	g := New(Options{Policy: testPolicy(), Level: LevelLocalChanges, Scope: NewScope(proj)})
	for _, tc := range []struct{ in, want string }{
		{`{"tool_name":"Bash","tool_input":{"command":"git status"}}`, "allow"},
		{`{"tool_name":"shell","tool_input":{"command":["bash","-lc","git push --force origin main"]}}`, "deny"},
		{`{"tool_name":"Write","tool_input":{"file_path":"main.go"}}`, "allow"},
		{`{"tool_name":"Write","tool_input":{"file_path":"` + outside + `/x"}}`, "ask"},
		{`{"tool_name":"apply_patch","tool_input":{"command":"*** Update File: a.go\n*** Update File: ` + outside + `/b\n"}}`, "ask"},
		{`{"tool_name":"read_many_files","tool_input":{"paths":["a","` + outside + `/b"]}}`, "ask"},
		{`{"tool_name":"mcp__x__y","tool_input":{"q":"1"}}`, "default"},
	} {
		c, err := ParseCall([]byte(strings.Replace(tc.in, "{", `{"cwd":"`+proj+`","hook_event_name":"PreToolUse",`, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Check(); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		d, err := g.DecideCall(c)
		if err != nil || d.Verdict.String() != tc.want {
			t.Errorf("%s: %v (%s) %v, want %s", tc.in, d.Verdict, d.Reason, err, tc.want)
		}
	}
}
