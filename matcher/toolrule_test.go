package matcher

import (
	"path"
	"strings"
	"testing"
)

// A tool rule decides a call of an MCP tool by its arguments: the
// strictest matching rule wins, paths are cleaned and scoped, and what
// cannot be told from the rule asks where a deny or ask may apply.
func TestDecideTool(t *testing.T) {
	p := New()
	p.Add(Deny, "mcp__github__create_issue(repo=acme/secret*)", Source{})
	p.Add(Ask, "mcp__github__create_issue(repo=acme/*)", Source{})
	p.Add(Allow, "mcp__github__create_issue(repo=me/*)", Source{})
	p.Add(Allow, "mcp__fs__write_file(path=path:notes/**)", Source{})
	p.Add(Deny, "mcp__fs__write_file(path=path:~/.ssh/**)", Source{})
	p.Add(Ask, `mcp__db__query(sql="drop *" options.force=true)`, Source{})
	p.Add(Deny, "mcp__github__delete_repo(*)", Source{})
	p.Add(Deny, "mcp__db__exec(sql=**DROP**)", Source{})
	p.Add(Allow, "command(git status)", Source{})
	root, home := "/w/proj", "/home/me"
	paths := ToolPaths{Root: root, Home: home, Abs: func(s string) string {
		if strings.HasPrefix(s, "~/") {
			s = home + s[1:]
		} else if !strings.HasPrefix(s, "/") {
			s = root + "/" + s
		}
		return path.Clean(s)
	}}
	for _, tc := range []struct {
		tool  string
		input map[string]any
		want  Decision
	}{
		{"mcp__github__create_issue", map[string]any{"repo": "me/tool", "title": "x"}, Allow},
		{"MCP__GitHub__Create_Issue", map[string]any{"repo": "acme/secret-plans"}, Deny},
		{"mcp__github__create_issue", map[string]any{"repo": "acme/web"}, Ask},
		// A safe string in another field does not hide the one that
		// matters (a regex over the whole input would be fooled).
		{"mcp__github__create_issue", map[string]any{"repo": "acme/secret", "title": "repo=me/x"}, Deny},
		{"mcp__github__create_issue", map[string]any{"title": "repo=me/x"}, Default},
		// Not a string: whether the deny holds cannot be told.
		{"mcp__github__create_issue", map[string]any{"repo": []any{"acme/secret"}}, Ask},
		// A string is no path: * keeps within a segment.
		{"mcp__github__create_issue", map[string]any{"repo": "me/tool/../../acme/secret"}, Default},
		{"mcp__fs__write_file", map[string]any{"path": "notes/a.md"}, Allow},
		{"mcp__fs__write_file", map[string]any{"path": "/w/proj/notes/sub/a.md"}, Allow},
		{"mcp__fs__write_file", map[string]any{"path": "notes/../.git/hooks/pre-commit"}, Default},
		{"mcp__fs__write_file", map[string]any{"path": "notes/../../proj/notes/x"}, Allow},
		{"mcp__fs__write_file", map[string]any{"path": "~/.ssh/authorized_keys"}, Deny},
		{"mcp__fs__write_file", map[string]any{"path": "/home/me/x/../.ssh/config"}, Deny},
		{"mcp__db__query", map[string]any{"sql": "drop table t", "options": map[string]any{"force": true}}, Ask},
		{"mcp__db__query", map[string]any{"sql": "drop table t", "options": map[string]any{"force": false}}, Default},
		{"mcp__db__query", map[string]any{"sql": "drop table t"}, Default},
		{"mcp__github__delete_repo", map[string]any{}, Deny},
		// A newline inside the argument does not slip past ** or *.
		{"mcp__db__exec", map[string]any{"sql": "select 1;\nDROP TABLE t"}, Deny},
		{"mcp__db__exec", map[string]any{"sql": "select 1;\n"}, Default},
		{"mcp__github__create_issue", map[string]any{"repo": "acme/secret\nx"}, Deny},
		{"mcp__github__delete_repo_x", map[string]any{}, Default},
	} {
		if got := p.DecideTool(tc.tool, tc.input, paths); got.Decision != tc.want {
			t.Errorf("%s %v: %v (%s), want %v", tc.tool, tc.input, got.Decision, got.Reason, tc.want)
		}
	}
}

func TestToolRuleErrors(t *testing.T) {
	for _, bad := range []string{"mcp__x__y()", "mcp__x__y(repo)", "mcp__x__y(=a)", `mcp__x__y(a="b)`, "mcp__x__y(a=[b)", "mcp__x__y(a=)", "mcp__x__y(a b=c)"} {
		if err := CheckToolRule(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	for _, good := range []string{"mcp__x__y(*)", "mcp__x__y(a=b c.d=path:x/**)", `mcp__x__y(a="b c")`, "command(git status)", "read_file(/x)"} {
		if err := CheckToolRule(good); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
	// An unreadable rule makes its tool's calls ask, never allow.
	p := New()
	p.Add(Allow, "mcp__x__y(a=[b)", Source{})
	if got := p.DecideTool("mcp__x__y", map[string]any{"a": "[b"}, ToolPaths{}); got.Decision != Ask || !got.Unreadable {
		t.Errorf("an unreadable rule: %v %v", got.Decision, got.Reason)
	}
}
