package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// A Call is one tool call an agent asks to make, as its pre-tool-use hook
// gives it: Claude Code's PreToolUse, Codex's PreToolUse and Gemini CLI's
// BeforeTool share this shape. ParseCall reads one strictly; DecideCall
// decides it. Hook mode, policy replay and Go hosts that receive an
// agent's hook JSON all go through these two.
type Call struct {
	SessionID string                     `json:"session_id"`
	Cwd       string                     `json:"cwd"`
	Event     string                     `json:"hook_event_name"`
	ToolName  string                     `json:"tool_name"`
	ToolInput map[string]json.RawMessage `json:"tool_input"`
	// ToolUseID is the agent's id of the call (Claude Code's
	// tool_use_id; Codex's call id), the same its telemetry carries.
	ToolUseID string `json:"tool_use_id"`
	// PermissionMode is the agent's permission mode, as Claude Code
	// sends it ("default", "acceptEdits", "plan", "bypassPermissions").
	// In bypassPermissions nobody is asked: DecideCall denies what it
	// would ask (Decision.NobodyToAsk).
	PermissionMode string `json:"permission_mode"`
}

// errMalformed is a hook input that cannot be decided as it is: not
// strict JSON, or a tool input without what its tool needs. A front end
// blocks the call.
var errMalformed = errors.New("malformed tool input")

// ParseCall reads a hook's JSON input strictly: valid UTF-8, no lone
// surrogate escapes, no duplicate key in any object (two readers of one
// call must not see two calls), one value and nothing after it. The
// command and the paths a decision reads hold no NUL (a C string ends
// there) and no carriage return (a blank to the parser, part of a word
// to bash), and cwd is an absolute path to a directory: a call decided
// against another directory than the one it runs in is not decided. A
// call that fails any of these is an error wrapping errMalformed.
func ParseCall(data []byte) (*Call, error) {
	if err := strictJSON(data); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	var c Call
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	return &c, nil
}

// Check checks what a pre-tool-use call must say before it is decided:
// its tool, an absolute, existing working directory, and a command and
// paths without NUL or CR.
func (c *Call) Check() error {
	if c.ToolName == "" {
		return fmt.Errorf("%w: no tool_name", errMalformed)
	}
	if err := checkDir(c.Cwd); err != nil {
		return fmt.Errorf("%w: cwd: %v", errMalformed, err)
	}
	var texts []string
	t := identify(c.ToolName)
	switch cat := t.cat; {
	case t.command:
		cmd, err := c.Command()
		if err != nil {
			return err
		}
		texts = append(texts, cmd, c.Dir())
	case cat == catRead || cat == catWrite:
		paths, err := c.Paths()
		if err != nil {
			return err
		}
		texts = paths
	}
	for _, t := range texts {
		if i := strings.IndexAny(t, "\x00\r"); i >= 0 {
			return fmt.Errorf("%w: %s: %q holds %q, which the shell or the kernel reads otherwise", errMalformed, c.ToolName, cut(t, 60), t[i])
		}
	}
	if t.command {
		if err := checkDir(c.Dir()); err != nil {
			return fmt.Errorf("%w: the directory the command runs in: %v", errMalformed, err)
		}
	}
	return nil
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// checkDir requires an absolute path to an existing directory.
func checkDir(dir string) error {
	switch {
	case dir == "":
		return errors.New("missing")
	case !filepath.IsAbs(dir):
		return fmt.Errorf("%q is not absolute", dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// DecideJSON decides an agent's pre-tool-use hook JSON in one call: read
// strictly (ParseCall), checked (Call.Check) and decided (DecideCall). An
// input that cannot be decided is an error ("malformed tool input"): a
// front end blocks the call.
func (g *Gate) DecideJSON(data []byte) (Decision, error) {
	c, err := ParseCall(data)
	if err != nil {
		return Decision{}, err
	}
	if err := c.Check(); err != nil {
		return Decision{}, err
	}
	return g.DecideCall(c)
}

// DecideCall decides a call by its tool's category: a shell tool by its
// command line, a file tool by every path it names (the worst verdict
// wins), any other tool (web, MCP, subagents, unknown) as a whole. An
// error (wrapping errMalformed) is a call that cannot be decided. A call
// the agent will put to nobody (Claude Code in bypassPermissions runs what
// a hook asks about, protected files included) is denied rather than
// asked, and says so (Decision.NobodyToAsk).
func (g *Gate) DecideCall(c *Call) (Decision, error) {
	d, err := g.decideCall(c)
	if err == nil && d.Verdict == Ask && c.nobodyAsked() {
		d = nobodyToAsk(d, c.PermissionMode)
	}
	return d, err
}

// decideCall decides c, its tool's name normalised once.
func (g *Gate) decideCall(c *Call) (Decision, error) {
	t := identify(c.ToolName)
	if t.command {
		cmd, err := c.Command()
		if err != nil {
			return Decision{}, err
		}
		return g.explain(t, cmd).Decision, nil
	}
	cat := t.cat
	if cat != catRead && cat != catWrite {
		if cat == catShell {
			if d, ok := g.decideByArgs(t, c); ok {
				return d, nil
			}
		}
		return g.decide(t, c.Key()), nil
	}
	paths, err := c.Paths()
	if err != nil {
		return Decision{}, err
	}
	var worst Decision
	for i, p := range paths {
		d := g.decideFile(t, p, cat == catWrite)
		if i == 0 || Stronger(d.Verdict, worst.Verdict) {
			worst = d
		}
	}
	return worst, nil
}

// Command returns a shell tool's command line: tool_input.command, a
// string, or an argv (Codex's shell tool), quoted back into a line.
func (c *Call) Command() (string, error) {
	raw, ok := c.ToolInput["command"]
	if !ok {
		return "", fmt.Errorf("%w: %s without tool_input.command", errMalformed, c.ToolName)
	}
	// json.Unmarshal takes null for an empty string or list: look at
	// the first byte first.
	switch t := bytes.TrimLeft(raw, " \t\r\n"); {
	case len(t) > 0 && t[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, nil
		}
	case len(t) > 0 && t[0] == '[':
		var argv []string
		if json.Unmarshal(raw, &argv) == nil && len(argv) > 0 {
			line, err := QuoteArgv(argv)
			if err != nil {
				return "", fmt.Errorf("%w: %s: tool_input.command: %v", errMalformed, c.ToolName, err)
			}
			return line, nil
		}
	}
	return "", fmt.Errorf("%w: %s: tool_input.command is neither a string nor a list of strings", errMalformed, c.ToolName)
}

// QuoteArgv quotes argv back into one bash command line, word for word
// (syntax.Quote). An argument no shell word can hold (a NUL byte) is an
// error.
func QuoteArgv(argv []string) (string, error) {
	parts := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return "", fmt.Errorf("argument %d: %v", i, err)
		}
		parts[i] = q
	}
	return strings.Join(parts, " "), nil
}

// Dir is where a shell tool runs its command: the cwd, or the directory
// the tool names (Gemini's run_shell_command has dir_path).
func (c *Call) Dir() string {
	if !IsCommandTool(c.ToolName) {
		return c.Cwd
	}
	for _, k := range []string{"dir_path", "directory", "workdir", "cwd"} {
		if d, ok := c.stringField(k); ok && d != "" {
			if filepath.IsAbs(d) || c.Cwd == "" {
				return d
			}
			return filepath.Join(c.Cwd, d)
		}
	}
	return c.Cwd
}

// pathKeys are the tool_input fields that name one path, in the agents'
// file tools: Claude Code (file_path, notebook_path, path), Gemini CLI
// (file_path, absolute_path, dir_path, path), others.
var pathKeys = []string{"file_path", "notebook_path", "absolute_path", "path", "dir_path", "directory", "target_file"}

// listKeys name several paths (Gemini's read_many_files: paths, include).
var listKeys = []string{"paths", "file_paths", "include"}

// searchTools read the working directory when they name no path.
var searchTools = map[string]bool{
	"grep": true, "glob": true, "ls": true, "list_directory": true, "search_file_content": true,
	"grep_search": true, "codebase_search": true, "file_search": true, "find_files": true, "list_dir": true,
	"read_many_files": true,
}

// Paths returns the paths a file tool acts on. A tool that names none is
// malformed, but for search tools, which search the working directory.
func (c *Call) Paths() ([]string, error) {
	tool := strings.ToLower(c.ToolName)
	if tool == "apply_patch" {
		return c.patchPaths()
	}
	var paths []string
	for _, k := range pathKeys {
		if p, ok := c.stringField(k); ok && p != "" {
			paths = append(paths, p)
		}
	}
	for _, k := range listKeys {
		raw, ok := c.ToolInput[k]
		if !ok {
			continue
		}
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: %s: tool_input.%s is not a list of strings", errMalformed, c.ToolName, k)
		}
		for _, p := range list {
			if p != "" {
				paths = append(paths, p)
			}
		}
	}
	// A glob pattern may reach out of the directory it searches.
	if tool == "glob" {
		if p, ok := c.stringField("pattern"); ok && (filepath.IsAbs(p) || strings.HasPrefix(p, "~") || strings.Contains(p, "..")) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		if searchTools[tool] {
			return []string{"."}, nil
		}
		return nil, fmt.Errorf("%w: %s names no path (want tool_input.file_path or path)", errMalformed, c.ToolName)
	}
	return paths, nil
}

// patchPaths returns the files a Codex apply_patch touches: its patch
// (tool_input.command, input or patch) names them in "*** Add File: ",
// "*** Update File: ", "*** Delete File: " and "*** Move to: " lines.
func (c *Call) patchPaths() ([]string, error) {
	var patch string
	found := false
	for _, k := range []string{"command", "input", "patch"} {
		if s, ok := c.stringField(k); ok {
			patch, found = s, true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: apply_patch without tool_input.command", errMalformed)
	}
	var paths []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, h := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if p, ok := strings.CutPrefix(line, h); ok && strings.TrimSpace(p) != "" {
				paths = append(paths, strings.TrimSpace(p))
			}
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: apply_patch names no file (want *** Update File: lines)", errMalformed)
	}
	return paths, nil
}

// stringField returns tool_input.<k> when it is a string.
func (c *Call) stringField(k string) (string, bool) {
	raw, ok := c.ToolInput[k]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// Key is what was decided, for the log and for tool patterns: a shell
// tool's command, a file tool's paths, else the tool's URL, command, query
// or prompt, else its whole input as JSON with sorted keys.
func (c *Call) Key() string {
	t := identify(c.ToolName)
	switch cat := t.cat; {
	case t.command:
		cmd, _ := c.Command()
		return cmd
	case cat == catRead || cat == catWrite:
		paths, _ := c.Paths()
		return strings.Join(paths, " ")
	}
	for _, k := range []string{"url", "command", "query", "prompt"} {
		if s, ok := c.stringField(k); ok {
			return s
		}
	}
	if len(c.ToolInput) == 0 {
		return ""
	}
	data, err := json.Marshal(c.ToolInput) // map keys sorted
	if err != nil {
		return ""
	}
	return string(data)
}

// nobodyAsked reports whether the agent will not put an ask to a person:
// Claude Code in bypassPermissions mode (it then runs what the hook asks
// about, protected paths included). Codex and Gemini CLI never ask on a
// hook's behalf; their front ends answer ask as deny already.
func (c *Call) nobodyAsked() bool { return c.PermissionMode == "bypassPermissions" }

// nobodyToAsk turns an Ask of a call nobody will be asked about into a
// Deny that says so. What no rule matches (Default) stays the agent's to
// decide: the person chose bypass for that.
func nobodyToAsk(d Decision, mode string) Decision {
	d.Verdict = Deny
	d.Reason = d.Reason + "; nobody can be asked in " + mode + " mode: run it without bypass, or allow it in the policy"
	d.NobodyToAsk = true
	return d
}

// strictJSON checks that data is one JSON value, valid UTF-8, with no
// lone surrogate escape and no duplicate key in any object.
func strictJSON(data []byte) error {
	if !utf8.Valid(data) {
		return errors.New("not valid UTF-8")
	}
	if !json.Valid(data) {
		var v any
		return fmt.Errorf("not JSON: %v", json.Unmarshal(data, &v))
	}
	if err := surrogates(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := noDuplicates(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// maxDepth bounds the nesting strictJSON walks.
const maxDepth = 10000

// noDuplicates reads one value from dec, failing on a duplicate key.
func noDuplicates(dec *json.Decoder, depth int) error {
	if depth > maxDepth {
		return errors.New("nested too deeply")
	}
	t, err := dec.Token()
	if err != nil {
		return err
	}
	switch t {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key := k.(string)
			if seen[key] {
				return fmt.Errorf("duplicate key %q", cut(key, 60))
			}
			seen[key] = true
			if err := noDuplicates(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for dec.More() {
			if err := noDuplicates(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// surrogates finds a \u escape of a UTF-16 surrogate that is not one half
// of a pair: encoding/json turns it into U+FFFD, which another reader of
// the same bytes may not.
func surrogates(data []byte) error {
	in := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\' && i+1 < len(data):
			i++
			if data[i] != 'u' {
				continue
			}
			r, ok := hex4(data, i+1)
			if !ok {
				return errors.New("bad \\u escape")
			}
			i += 4
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return fmt.Errorf("lone surrogate \\u%04x", r)
			case r >= 0xD800 && r <= 0xDBFF:
				lo, ok := rune(0), false
				if i+2 < len(data) && data[i+1] == '\\' && data[i+2] == 'u' {
					lo, ok = hex4(data, i+3)
				}
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return fmt.Errorf("lone surrogate \\u%04x", r)
				}
				i += 6
			}
		}
	}
	return nil
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
