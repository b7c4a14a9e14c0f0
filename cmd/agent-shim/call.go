package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agent-shim/agent-shim/gate"
	"mvdan.cc/sh/v3/syntax"
)

// decideCall decides a hook call through the gate, by the tool's category:
// a shell tool by its command line, a file tool by every path it names
// (the worst verdict wins), any other tool (web, MCP, subagents, unknown)
// as a whole.
func decideCall(g *gate.Gate, in *hookInput) (gate.Decision, error) {
	tool := in.ToolName
	if gate.IsCommandTool(tool) {
		cmd, err := commandOf(in)
		if err != nil {
			return gate.Decision{}, err
		}
		return g.DecideGeneric(tool, cmd), nil
	}
	cat := gate.CategoryOf(tool)
	if cat != gate.CategoryRead && cat != gate.CategoryWrite {
		return g.DecideGeneric(tool, genericKey(in)), nil
	}
	paths, err := pathsOf(in)
	if err != nil {
		return gate.Decision{}, err
	}
	var worst gate.Decision
	for i, p := range paths {
		var d gate.Decision
		if cat == gate.CategoryWrite {
			d = g.DecideFileWrite(tool, p)
		} else {
			d = g.DecideFileRead(tool, p)
		}
		if i == 0 || gate.Stronger(d.Verdict, worst.Verdict) {
			worst = d
		}
	}
	return worst, nil
}

// commandOf returns a shell tool's command line: tool_input.command, a
// string, or an argv (Codex's shell tool), quoted back into a line.
func commandOf(in *hookInput) (string, error) {
	raw, ok := in.ToolInput["command"]
	if !ok {
		return "", fmt.Errorf("%w: %s without tool_input.command", errMalformed, in.ToolName)
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
			line, err := quoteArgv(argv)
			if err != nil {
				return "", fmt.Errorf("%w: %s: tool_input.command: %v", errMalformed, in.ToolName, err)
			}
			return line, nil
		}
	}
	return "", fmt.Errorf("%w: %s: tool_input.command is neither a string nor a list of strings", errMalformed, in.ToolName)
}

// quoteArgv quotes argv back into one bash command line, word for word
// (syntax.Quote). An argument no shell word can hold (a NUL byte) is an
// error.
func quoteArgv(argv []string) (string, error) {
	parts := make([]string, len(argv))
	for i, a := range argv {
		q, err := quoteWord(i, a)
		if err != nil {
			return "", fmt.Errorf("argument %d: %v", i, err)
		}
		parts[i] = q
	}
	return strings.Join(parts, " "), nil
}

// quoteWord quotes argument i of an argv with syntax.Quote.
func quoteWord(_ int, a string) (string, error) { return syntax.Quote(a, syntax.LangBash) }

// callDir is where a shell tool runs its command: the cwd, or the
// directory the tool names (Gemini's run_shell_command has dir_path).
func callDir(in *hookInput) string {
	if !gate.IsCommandTool(in.ToolName) {
		return in.Cwd
	}
	for _, k := range []string{"dir_path", "directory", "workdir", "cwd"} {
		if d, ok := stringField(in, k); ok && d != "" {
			if filepath.IsAbs(d) || in.Cwd == "" {
				return d
			}
			return filepath.Join(in.Cwd, d)
		}
	}
	return in.Cwd
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

// pathsOf returns the paths a file tool acts on. A tool that names none is
// malformed, but for search tools, which search the working directory.
func pathsOf(in *hookInput) ([]string, error) {
	tool := strings.ToLower(in.ToolName)
	if tool == "apply_patch" {
		return patchPaths(in)
	}
	var paths []string
	for _, k := range pathKeys {
		if p, ok := stringField(in, k); ok && p != "" {
			paths = append(paths, p)
		}
	}
	for _, k := range listKeys {
		raw, ok := in.ToolInput[k]
		if !ok {
			continue
		}
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: %s: tool_input.%s is not a list of strings", errMalformed, in.ToolName, k)
		}
		for _, p := range list {
			if p != "" {
				paths = append(paths, p)
			}
		}
	}
	// A glob pattern may reach out of the directory it searches.
	if tool == "glob" {
		if p, ok := stringField(in, "pattern"); ok && (filepath.IsAbs(p) || strings.HasPrefix(p, "~") || strings.Contains(p, "..")) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		if searchTools[tool] {
			return []string{"."}, nil
		}
		return nil, fmt.Errorf("%w: %s names no path (want tool_input.file_path or path)", errMalformed, in.ToolName)
	}
	return paths, nil
}

// patchPaths returns the files a Codex apply_patch touches: its patch
// (tool_input.command, input or patch) names them in "*** Add File: ",
// "*** Update File: ", "*** Delete File: " and "*** Move to: " lines.
func patchPaths(in *hookInput) ([]string, error) {
	var patch string
	found := false
	for _, k := range []string{"command", "input", "patch"} {
		if s, ok := stringField(in, k); ok {
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
func stringField(in *hookInput, k string) (string, bool) {
	raw, ok := in.ToolInput[k]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// genericKey is what tool patterns match for a tool that is neither a
// shell nor a file tool: its URL, command, query or prompt, else its whole
// input as JSON with sorted keys.
func genericKey(in *hookInput) string {
	for _, k := range []string{"url", "command", "query", "prompt"} {
		if s, ok := stringField(in, k); ok {
			return s
		}
	}
	if len(in.ToolInput) == 0 {
		return ""
	}
	data, err := json.Marshal(in.ToolInput) // map keys sorted
	if err != nil {
		return ""
	}
	return string(data)
}
