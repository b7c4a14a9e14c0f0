package gate

import (
	"testing"

	"github.com/agent-shim/agent-shim/matcher"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		glob, in string
		want     bool
	}{
		{"git *", "git status", true},
		{"git *", "git add dir/file", false}, // * does not cross /
		{"git **", "git add dir/file", true},
		{"/etc/*", "/etc/passwd", true},
		{"/etc/*", "/etc/ssh/sshd_config", false},
		{"/etc/**", "/etc/ssh/sshd_config", true},
		{"/etc/**", "/etc", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "ab", false},
		{"file?.go", "file1.go", true},
		{"file?.go", "file/.go", false},
		{"[ab]*.txt", "a1.txt", true},
		{"[!ab]*.txt", "c1.txt", true},
		{"[!ab]*.txt", "a1.txt", false},
		{`\*`, "*", true},
		{`\*`, "x", false},
		{"a.b", "axb", false}, // regexp metacharacters are literal
		{"(x)+", "(x)+", true},
		{"mcp__github__*", "mcp__github__create_issue", true},
		{"", "", true},
		{"", "x", false},
	}
	seen := map[[2]string]bool{}
	for _, tc := range tests {
		if seen[[2]string{tc.glob, tc.in}] {
			t.Fatalf("duplicate input %q %q", tc.glob, tc.in)
		}
		seen[[2]string{tc.glob, tc.in}] = true
		re, err := matcher.Glob(tc.glob)
		if err != nil {
			t.Fatalf("matcher.Glob(%q): %v", tc.glob, err)
		}
		if got := re.MatchString(tc.in); got != tc.want {
			t.Errorf("glob %q, input %q: got %v, want %v", tc.glob, tc.in, got, tc.want)
		}
		if want, err := globOracle(tc.glob, tc.in); err != nil || want != tc.want {
			t.Errorf("glob %q, input %q: the path.Match oracle says %v, %v", tc.glob, tc.in, want, err)
		}
	}
	for _, bad := range []string{"[abc", `abc\`} {
		if _, err := matcher.Glob(bad); err == nil {
			t.Errorf("matcher.Glob(%q): no error", bad)
		}
	}
}

func TestToolPolicyMatch(t *testing.T) {
	p, err := NewToolPolicy("/proj",
		[]string{"bash:git *", "read_file:internal/tui/**", "mcp__github__*", "Write:/tmp/out/*", "web*:https://go.dev/**"},
		[]string{"write_file:/etc/*", "bash:git push*", "mcp__github__delete_*", "read_file:**/.env"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, key string
		want      toolVerdict
	}{
		{"Bash", "git status", toolAllow},
		{"run_shell_command", "git log", toolAllow}, // bash: covers every shell tool
		{"shell", "git diff", toolAllow},
		{"Bash", "git push origin main", toolDeny}, // deny wins
		{"Bash", "npm test", toolUnmatched},
		{"Read", "/proj/internal/tui/view.go", toolAllow}, // read_file: covers Read, relative to the root
		{"read_file", "/proj/internal/tui/a/b.go", toolAllow},
		{"Read", "/proj/internal/other.go", toolUnmatched},
		{"Read", "/proj/internal/tui/.env", toolDeny},
		{"Read", "internal/tui/view.go", toolUnmatched}, // keys are absolute
		{"Write", "/etc/passwd", toolDeny},              // write_file: covers Write
		{"Edit", "/etc/hosts", toolDeny},
		{"Write", "/tmp/out/x", toolAllow},
		{"write", "/tmp/out/x", toolAllow},                        // tool names ignore case
		{"Edit", "/tmp/out/x", toolUnmatched},                     // Write: is that tool only
		{"mcp__github__create_issue", `{"title":"x"}`, toolAllow}, // bare glob names the tool
		{"mcp__github__delete_repo", `{}`, toolDeny},
		{"mcp__gitlab__create_issue", `{}`, toolUnmatched},
		{"WebFetch", "https://go.dev/doc/x", toolAllow}, // the tool part may be a glob
		{"WebFetch", "https://evil.example/go.dev/", toolUnmatched},
	}
	for _, tc := range tests {
		t.Logf("input: %s %q", tc.tool, tc.key)
		if got := p.match(identify(tc.tool), tc.key); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.tool, tc.key, got, tc.want)
		}
	}
	var nilPolicy *ToolPolicy
	if got := nilPolicy.match(identify("Bash"), "ls"); got != toolUnmatched {
		t.Errorf("nil policy: %v", got)
	}
}

func TestToolPolicyRefuses(t *testing.T) {
	for _, tc := range []struct{ allow, deny []string }{
		{allow: []string{"*"}},
		{allow: []string{"**"}},
		{allow: []string{""}},
		{deny: []string{"bash:[x"}},
	} {
		if _, err := NewToolPolicy("/p", tc.allow, tc.deny); err == nil {
			t.Errorf("NewToolPolicy(%q, %q): no error", tc.allow, tc.deny)
		}
	}
	// A bare * may deny everything, which is safe.
	if _, err := NewToolPolicy("/p", nil, []string{"*"}); err != nil {
		t.Errorf("deny *: %v", err)
	}
}

func TestExactAllow(t *testing.T) {
	p := &ToolPolicy{root: "/p"}
	line := "rm build/*.o"
	if err := p.addAllow("bash:" + escapeGlob(line)); err != nil {
		t.Fatal(err)
	}
	if !p.exactAllow(identify("Bash"), line) {
		t.Errorf("exactAllow(%q) = false", line)
	}
	if p.exactAllow(identify("Bash"), "rm build/x.o") {
		t.Errorf("an exact pattern matched another line")
	}
	if p.match(identify("Bash"), "rm build/x.o") != toolUnmatched {
		t.Errorf("an escaped * matched as a glob")
	}
}

func TestCategoryOf(t *testing.T) {
	for tool, want := range map[string]category{
		"Read": catRead, "Grep": catRead, "Glob": catRead, "LS": catRead,
		"read_file": catRead, "list_directory": catRead, "glob": catRead,
		"search_file_content": catRead, "view": catRead,
		"Write": catWrite, "Edit": catWrite, "MultiEdit": catWrite,
		"NotebookEdit": catWrite, "apply_patch": catWrite, "write_file": catWrite,
		"replace": catWrite, "edit_file": catWrite,
		"Task": catSubagent, "spawn_agent": catSubagent,
		"Bash": catShell, "run_shell_command": catShell, "shell": catShell,
		"WebFetch": catShell, "mcp__github__create_issue": catShell, "": catShell,
	} {
		if got := identify(tool).cat; got != want {
			t.Errorf("identify(%q).cat = %v, want %v", tool, got, want)
		}
	}
}
