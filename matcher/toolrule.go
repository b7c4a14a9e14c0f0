package matcher

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode"

	"github.com/agent-shim/agent-shim/internal/fileedit"
)

// Tool rules: a grant that names a tool which is not a shell (an MCP
// server's tool, as the agent names it: mcp__github__create_issue) and
// conditions on the arguments of its call:
//
//	mcp__github__create_issue(repo=acme/*)
//	mcp__fs__write_file(path=path:~/notes/**)
//	mcp__github__merge_pull_request(*)
//
// Each condition is NAME=PATTERN, separated by blanks; a pattern with a
// blank is quoted ("a b"). NAME is an argument of the call's input, a
// dotted path for a nested one (options.branch). PATTERN is a glob (Glob:
// * and ? within a path segment, ** across, […] a class, \ quotes),
// matched against the whole argument, newlines and all: a
// string, or the JSON text of a number or a boolean. With path: the
// argument is a path, made absolute against the call's directory (~ is
// the home) and cleaned, and the glob is one from the project root, or
// the home for ~/. (*) alone is any call of the tool. A rule matches a
// call of the tool it names (in any case) whose every condition holds; a
// condition on an argument the call does not give does not hold.
//
// An argument of another type (an array, an object) cannot be told from
// the pattern: a deny or ask rule that it alone keeps from matching asks.

// toolRule is one tool rule, compiled.
type toolRule struct {
	rule  *Rule
	tool  string // lower-cased
	any   bool   // (*)
	conds []toolCond
	err   error // the rule cannot be read: its tool's calls ask
}

type toolCond struct {
	name    string // dotted
	isPath  bool
	pattern string
	re      *regexp.Regexp // for a path: compiled when the root is known
}

// ToolPaths resolves the paths of a tool call: Abs makes an argument
// absolute against the call's directory and cleans it ("" when it
// cannot); Root and Home are the project root and the home directory.
type ToolPaths struct {
	Abs        func(string) string
	Root, Home string
}

// DecideTool decides a call of a tool that is not a shell by the policy's
// tool rules: the strictest rule that matches it decides (Deny, then Ask,
// then Allow); Default when none does.
func (p *Policy) DecideTool(tool string, input map[string]any, paths ToolPaths) Verdict {
	tool = strings.ToLower(tool)
	var best *Verdict
	for _, tr := range p.toolRules() {
		if tr.tool != tool {
			continue
		}
		d := tr.rule.Decision
		v := Verdict{Decision: d, Rule: tr.rule}
		switch m, why := tr.match(input, paths); {
		case tr.err != nil:
			v.Decision, v.Unreadable = Ask, true
			v.Reason = fmt.Sprintf("rule %q cannot be read: %v", tr.rule.Text, tr.err)
		case m:
			v.Reason = fmt.Sprintf("matches the %s rule %s", d, tr.rule.Text)
		case why != "" && d != Allow:
			v.Decision = Ask
			v.Reason = fmt.Sprintf("may match the %s rule %s: %s", d, tr.rule.Text, why)
		default:
			continue
		}
		if best == nil || v.Decision.rank() > best.Decision.rank() {
			best = &v
		}
	}
	if best == nil {
		return Verdict{Decision: Default, Reason: "no tool rule matches", Unmatched: true}
	}
	return *best
}

// toolRules are the policy's tool rules, compiled once.
func (p *Policy) toolRules() []*toolRule {
	p.toolOnce.Do(func() {
		for _, r := range p.Rules() {
			name, body, ok := grantShape(r.Text)
			if !ok || name == "command" || fileGrants[strings.ToLower(name)] {
				continue
			}
			tr, err := parseToolRule(name, body)
			if err != nil {
				tr = &toolRule{tool: strings.ToLower(name), err: err}
			}
			tr.rule = r
			p.tools = append(p.tools, tr)
		}
	})
	return p.tools
}

// fileGrants are the grants of file tools (read_file(…)): the agent's,
// not tool rules.
var fileGrants = map[string]bool{"read_file": true, "write_file": true, "edit": true, "read": true, "write": true}

// CheckToolRule reports whether a grant that names a tool other than a
// shell is a well-formed tool rule (see DecideTool); nil for a command
// grant, a file tool's, or a line that is no grant.
func CheckToolRule(grant string) error {
	name, body, ok := grantShape(grant)
	if !ok || name == "command" || fileGrants[strings.ToLower(name)] {
		return nil
	}
	_, err := parseToolRule(name, body)
	return err
}

func parseToolRule(name, body string) (*toolRule, error) {
	tr := &toolRule{tool: strings.ToLower(name)}
	body = strings.TrimSpace(body)
	if body == "*" {
		tr.any = true
		return tr, nil
	}
	words, err := splitConds(body)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("tool rule %s(): no condition; write %s(*) for every call", name, name)
	}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" || !validArgName(k) {
			return nil, fmt.Errorf("tool rule %s: %q is no condition NAME=PATTERN", name, w)
		}
		c := toolCond{name: k}
		if rest, ok := strings.CutPrefix(v, "path:"); ok {
			c.isPath, v = true, rest
		}
		if v == "" {
			return nil, fmt.Errorf("tool rule %s: condition %s has an empty pattern", name, k)
		}
		c.pattern = v
		if !c.isPath {
			re, err := Glob(v)
			if err != nil {
				return nil, fmt.Errorf("tool rule %s: condition %s: %v", name, k, err)
			}
			c.re = re
		} else if _, err := Glob(v); err != nil {
			return nil, fmt.Errorf("tool rule %s: condition %s: %v", name, k, err)
		}
		tr.conds = append(tr.conds, c)
	}
	return tr, nil
}

func validArgName(k string) bool {
	for _, part := range strings.Split(k, ".") {
		if part == "" {
			return false
		}
		for _, r := range part {
			if !(r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return false
			}
		}
	}
	return true
}

// splitConds splits a tool rule's body at blanks outside double quotes,
// removing the quotes (\" and \\ inside them are a quote and a backslash).
func splitConds(s string) ([]string, error) {
	var out []string
	var b strings.Builder
	in, have := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\'):
			i++
			b.WriteByte(s[i])
		case c == '"':
			in, have = !in, true
		case !in && (c == ' ' || c == '\t'):
			if have {
				out = append(out, b.String())
				b.Reset()
				have = false
			}
		default:
			b.WriteByte(c)
			have = true
		}
	}
	if in {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if have {
		out = append(out, b.String())
	}
	return out, nil
}

// match reports whether the call's input meets every condition; why says
// which condition could not be told (an argument of another type), when
// that alone kept it from matching.
func (tr *toolRule) match(input map[string]any, paths ToolPaths) (bool, string) {
	if tr.err != nil {
		return false, ""
	}
	if tr.any {
		return true, ""
	}
	unknown := ""
	for _, c := range tr.conds {
		v, ok := fileedit.Lookup(input, strings.Split(c.name, ".")...) // a dotted name reaches nested arguments
		if !ok {
			return false, ""
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case float64, bool, json.Number:
			s = fmt.Sprint(x)
		default:
			if unknown == "" {
				unknown = fmt.Sprintf("argument %s is not a string", c.name)
			}
			continue
		}
		if c.isPath {
			if !c.matchPath(s, paths) {
				return false, ""
			}
			continue
		}
		if !c.re.MatchString(s) {
			return false, ""
		}
	}
	return unknown == "", unknown
}

// matchPath matches a path argument: made absolute and cleaned, against
// the glob taken from the root (or the home for ~/).
func (c toolCond) matchPath(s string, paths ToolPaths) bool {
	abs := ""
	if paths.Abs != nil {
		abs = paths.Abs(s)
	}
	if abs == "" {
		return false
	}
	g := c.pattern
	switch {
	case strings.HasPrefix(g, "~/"):
		if paths.Home == "" {
			return false
		}
		g = globJoin(paths.Home, g[2:])
	case !strings.HasPrefix(g, "/"):
		if paths.Root == "" {
			return false
		}
		g = globJoin(paths.Root, g)
	}
	re, err := Glob(g)
	return err == nil && re.MatchString(path.Clean(abs))
}

// globJoin puts a glob below a directory, the directory's text quoted.
func globJoin(dir, g string) string {
	var b strings.Builder
	for _, r := range strings.TrimSuffix(dir, "/") {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String() + "/" + g
}
