package gate

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/matcher"
)

// category is what a tool does, which decides what a level auto-approves.
type category int

const (
	// catShell runs commands: shell tools, and every tool the gate
	// does not know (web, MCP, …), which may do anything.
	catShell category = iota
	// catRead reads files or lists directories.
	catRead
	// catWrite writes or edits files.
	catWrite
	// catSubagent starts a sub-agent, which goes through the same
	// gate (it inherits the level).
	catSubagent
)

func (c category) String() string {
	switch c {
	case catShell:
		return "shell"
	case catRead:
		return "read"
	case catWrite:
		return "write"
	case catSubagent:
		return "subagent"
	}
	return fmt.Sprintf("category(%d)", int(c))
}

// categories maps lower-cased tool names of Claude Code, Codex, Gemini CLI
// and other agents to their category. Anything else is catShell.
var categories = map[string]category{
	// read
	"read": catRead, "grep": catRead, "glob": catRead, "ls": catRead,
	"read_file": catRead, "read_many_files": catRead, "list_directory": catRead,
	"search_file_content": catRead, "view": catRead, "list_dir": catRead,
	"find_files": catRead, "file_search": catRead, "grep_search": catRead,
	"codebase_search": catRead, "notebookread": catRead, "view_file": catRead,
	// write
	"write": catWrite, "edit": catWrite, "multiedit": catWrite,
	"notebookedit": catWrite, "apply_patch": catWrite, "write_file": catWrite,
	"replace": catWrite, "edit_file": catWrite, "create_file": catWrite,
	"str_replace": catWrite, "str_replace_based_edit_tool": catWrite,
	"delete_file": catWrite,
	// subagent
	"task": catSubagent, "spawn_agent": catSubagent, "agent": catSubagent,
	"subagent": catSubagent,
}

// commandTools are the shell tools whose key is a command line, decided by
// the command policy. Other catShell tools are decided as a whole.
var commandTools = map[string]bool{
	"bash": true, "run_shell_command": true, "shell": true, "exec_command": true,
	"local_shell": true, "run_terminal_cmd": true, "execute_command": true,
}

// IsCommandTool reports whether a tool runs shell command lines (Bash,
// run_shell_command, shell, …): its key is the command, decided by the
// command policy. Other catShell tools are decided as a whole.
func IsCommandTool(tool string) bool { return commandTools[strings.ToLower(tool)] }

// toolID is a tool's name normalised once per call, then decided: the
// name as the agent gave it, lower-cased, canonical (for patterns and
// session answers), its category and whether it runs command lines.
type toolID struct {
	name, lower, canon string
	cat                category
	command            bool
}

// identify normalises a tool's name.
func identify(tool string) toolID {
	t := toolID{name: tool, lower: strings.ToLower(tool)}
	t.command = commandTools[t.lower]
	t.canon = t.lower
	if t.command {
		t.canon = "bash"
	}
	t.cat = catShell
	if c, ok := categories[t.lower]; ok {
		t.cat = c
	}
	return t
}

// bashTool is the shell tool of DecideBash, Explain and the run-time
// layer.
var bashTool = identify("Bash")

// canonicalTool names a tool for patterns and session approvals: "bash"
// for every command tool, otherwise the lower-cased name.
func canonicalTool(tool string) string {
	t := strings.ToLower(tool)
	if commandTools[t] {
		return "bash"
	}
	return t
}

// toolVerdict is the result of matching a tool call against a ToolPolicy.
type toolVerdict int

const (
	// toolUnmatched means no pattern matches.
	toolUnmatched toolVerdict = iota
	// toolAllow means an allow pattern matches and no deny pattern does.
	toolAllow
	// toolDeny means a deny pattern matches.
	toolDeny
)

func (v toolVerdict) String() string {
	switch v {
	case toolUnmatched:
		return "unmatched"
	case toolAllow:
		return "allow"
	case toolDeny:
		return "deny"
	}
	return fmt.Sprintf("toolVerdict(%d)", int(v))
}

// ToolPolicy holds the user's `tool:glob` patterns (agentShim.tools in
// config.json). A pattern `<tool>:<glob>` applies to that tool only; the
// tool names "bash", "read_file" and "write_file" also stand for every tool
// of their kind (Bash, run_shell_command, shell; Read, Grep, view, …;
// Write, Edit, apply_patch, …), other names match case-insensitively and may
// hold globs. A bare `<glob>` applies to every tool and matches the key or
// the tool's name (`mcp__github__*` names every tool of one MCP server).
//
// The key is the command for shell tools and the absolute path for file
// tools; for file tools a relative glob is taken from the project root
// and a leading ~ is the home directory. In globs `**` crosses `/`, `*` and `?` do not, `[…]` is a class and
// `\` quotes the next character. Deny wins. It is safe for concurrent use.
type ToolPolicy struct {
	root string

	mu    sync.RWMutex
	allow []*toolPattern
	deny  []*toolPattern
}

type toolPattern struct {
	text    string
	tool    string         // lower-cased; "" for a bare glob
	toolRE  *regexp.Regexp // when tool holds a glob
	re      *regexp.Regexp // the key glob, as written
	absRE   *regexp.Regexp // the key glob resolved against the root, for file tools
	literal bool           // the glob has no metacharacter: it names one key
	lit     string         // the key, unquoted, when literal
}

// NewToolPolicy returns a policy of allow and deny patterns; root is the
// project root that relative globs of file tools are resolved against.
func NewToolPolicy(root string, allow, deny []string) (*ToolPolicy, error) {
	p := &ToolPolicy{root: root}
	var errs []error
	for i, s := range allow {
		if err := p.addAllow(s); err != nil {
			errs = append(errs, fmt.Errorf("allow[%d]: %w", i, err))
		}
	}
	for i, s := range deny {
		if err := p.addDeny(s); err != nil {
			errs = append(errs, fmt.Errorf("deny[%d]: %w", i, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// Allow adds an allow pattern. A bare glob made only of stars would allow
// every call of every tool and is refused.
func (p *ToolPolicy) addAllow(pattern string) error {
	tp, err := p.parse(pattern)
	if err != nil {
		return err
	}
	if tp.tool == "" && strings.Trim(pattern, "*") == "" {
		return fmt.Errorf("pattern %q: allows every tool; name the tool (tool:glob)", pattern)
	}
	p.mu.Lock()
	p.allow = append(p.allow, tp)
	p.mu.Unlock()
	return nil
}

// Deny adds a deny pattern.
func (p *ToolPolicy) addDeny(pattern string) error {
	tp, err := p.parse(pattern)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.deny = append(p.deny, tp)
	p.mu.Unlock()
	return nil
}

// merge adds q's patterns to p's; a nil q adds nothing.
func (p *ToolPolicy) merge(q *ToolPolicy) {
	if q == nil || q == p {
		return
	}
	q.mu.RLock()
	allow, deny := slices.Clone(q.allow), slices.Clone(q.deny)
	q.mu.RUnlock()
	p.mu.Lock()
	p.allow = append(p.allow, allow...)
	p.deny = append(p.deny, deny...)
	p.mu.Unlock()
}

// Patterns returns the allow and deny patterns as written.
func (p *ToolPolicy) Patterns() (allow, deny []string) {
	if p == nil {
		return nil, nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, tp := range p.allow {
		allow = append(allow, tp.text)
	}
	for _, tp := range p.deny {
		deny = append(deny, tp.text)
	}
	return allow, deny
}

// toolName reports whether s can be the tool part of a pattern: a name,
// possibly with globs ([A-Za-z0-9_.*?-]+).
func toolName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.*?-", c) >= 0) {
			return false
		}
	}
	return true
}

func (p *ToolPolicy) parse(pattern string) (*toolPattern, error) {
	if strings.TrimSpace(pattern) == "" {
		return nil, errors.New("empty pattern")
	}
	tp := &toolPattern{text: pattern}
	glob := pattern
	if tool, rest, ok := strings.Cut(pattern, ":"); ok && toolName(tool) {
		tp.tool = strings.ToLower(tool)
		glob = rest
		if strings.ContainsAny(tool, "*?") {
			re, err := matcher.Glob(tp.tool)
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %w", pattern, err)
			}
			tp.toolRE = re
		}
	}
	var err error
	if tp.re, err = matcher.Glob(glob); err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	tp.absRE = tp.re
	abs, err := expandHome(glob)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	if abs != glob {
		home := strings.TrimSuffix(abs, glob[1:])
		abs = escapeGlob(home) + glob[1:]
	} else if p.root != "" && !strings.HasPrefix(glob, "/") {
		abs = escapeGlob(filepath.Clean(p.root)) + "/" + glob
	}
	if abs != glob {
		if tp.absRE, err = matcher.Glob(abs); err != nil {
			return nil, fmt.Errorf("pattern %q: %w", pattern, err)
		}
	}
	tp.lit, tp.literal = unquoteLiteral(glob)
	return tp, nil
}

// Match decides a tool call: toolDeny when a deny pattern matches,
// toolAllow when only an allow pattern does, else toolUnmatched. A nil
// policy matches nothing.
func (p *ToolPolicy) match(t toolID, key string) toolVerdict {
	if p == nil {
		return toolUnmatched
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	file := t.cat == catRead || t.cat == catWrite
	for _, tp := range p.deny {
		if tp.matches(t, key, file) {
			return toolDeny
		}
	}
	for _, tp := range p.allow {
		if tp.matches(t, key, file) {
			return toolAllow
		}
	}
	return toolUnmatched
}

// empty reports whether the policy has no pattern.
func (p *ToolPolicy) empty() bool {
	if p == nil {
		return true
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.allow) == 0 && len(p.deny) == 0
}

// exactAllow reports whether an allow pattern without metacharacters names
// exactly this call: an "always" answer to an exact request.
func (p *ToolPolicy) exactAllow(t toolID, key string) bool {
	if p == nil {
		return false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, tp := range p.allow {
		if tp.literal && tp.tool != "" && tp.lit == key && tp.toolMatches(t) {
			return true
		}
	}
	return false
}

func (tp *toolPattern) toolMatches(t toolID) bool {
	switch {
	case tp.toolRE != nil:
		return tp.toolRE.MatchString(t.lower)
	case tp.tool == t.lower:
		return true
	case tp.tool == "bash":
		return t.command
	case tp.tool == "read_file":
		return t.cat == catRead
	case tp.tool == "write_file":
		return t.cat == catWrite
	}
	return false
}

func (tp *toolPattern) matches(t toolID, key string, file bool) bool {
	re := tp.re
	if file {
		re = tp.absRE
	}
	if tp.tool == "" {
		return re.MatchString(key) || tp.re.MatchString(t.name)
	}
	return tp.toolMatches(t) && re.MatchString(key)
}

// escapeGlob quotes the glob metacharacters of s, so that the pattern
// names s exactly.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			sb.WriteByte('\\')
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// unquoteLiteral returns the text a glob names when it has no unquoted
// metacharacter.
func unquoteLiteral(glob string) (string, bool) {
	var sb strings.Builder
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*', '?', '[':
			return "", false
		case '\\':
			if i+1 < len(glob) {
				i++
			}
			sb.WriteByte(glob[i])
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String(), true
}
