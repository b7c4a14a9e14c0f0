package manifest

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/syntax"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		in      string
		want    []string // texts, in order
		nums    []int
		wantErr string
	}{
		{in: "", want: nil},
		{in: "\n\n  \n\t\n", want: nil},
		{in: "# only a comment\n   # indented comment\n", want: nil},
		{in: "git status\n", want: []string{"git status"}, nums: []int{1}},
		{in: "git status", want: []string{"git status"}, nums: []int{1}},
		{in: "\n# c\ngit status\n\ngit diff\n", want: []string{"git status", "git diff"}, nums: []int{3, 5}},
		{in: "git status\r\ngit diff\r\n", want: []string{"git status", "git diff"}, nums: []int{1, 2}},
		{in: "  git   status  \n", want: []string{"git   status"}},
		{in: "git status # a comment\n", want: []string{"git status"}},
		{in: "git status# not a comment\n", want: []string{"git status# not a comment"}},
		{in: "grep '#include' x # comment\n", want: []string{"grep '#include' x"}},
		{in: `grep "#include" x # comment` + "\n", want: []string{`grep "#include" x`}},
		{in: `grep \#include x # comment` + "\n", want: []string{`grep \#include x`}},
		{in: "command(regex:^foo$)\n", want: []string{"command(regex:^foo$)"}},
		{in: "command(git status)\n", want: []string{"command(git status)"}},
		{in: "command(git status)  # why\n", want: []string{"command(git status)"}},
		{in: "command(regex:^a #b$)\n", want: []string{"command(regex:^a #b$)"}},
		{in: "command(*)\n", want: []string{"command(*)"}},

		{in: "git status\ngrep 'oops\n", wantErr: "f.txt:2:6: reached EOF without closing quote `'`"},
		{in: `grep "oops` + "\n", wantErr: "f.txt:1:6: reached EOF without closing quote `\"`"},
		{in: "git status\x00\n", wantErr: "f.txt:1:11: NUL byte"},
		{in: "ok\ngit \xff\n", wantErr: "f.txt:2: invalid UTF-8"},
		{in: "git status; rm -rf /\n", wantErr: "f.txt:1:13: more than one command"},
		{in: "git status && rm -rf /\n", wantErr: "f.txt:1:1: not a simple command"},
		{in: "git status | sh\n", wantErr: "f.txt:1:1: not a simple command"},
		{in: "git status &\n", wantErr: "f.txt:1:12: & is not part of a command"},
		{in: "git status > x\n", wantErr: "f.txt:1:12: redirections are not allowed"},
		{in: "FOO=1 make\n", wantErr: "f.txt:1:1: variable assignments are not allowed"},
		{in: "echo $HOME\n", wantErr: "f.txt:1:6: expansions are not allowed"},
		{in: `echo "$HOME"` + "\n", wantErr: "f.txt:1:7: expansions are not allowed"},
		{in: "echo $(id)\n", wantErr: "f.txt:1:6: expansions are not allowed"},
		{in: "echo `id`\n", wantErr: "f.txt:1:6: expansions are not allowed"},
		{in: "echo $'\\x41'\n", wantErr: "f.txt:1:6: $'…' quoting is not allowed"},
		{in: "echo {a,b}\n", wantErr: "f.txt:1:6: brace expansion is not allowed"},
		{in: "! git status\n", wantErr: "f.txt:1:1: ! negation"},
		{in: "if true; then x; fi\n", wantErr: "f.txt:1:1: not a simple command"},
		{in: "command(regex:[)\n", wantErr: "f.txt:1: invalid grant regex"},

		// Encodings and line ends: a BOM is not part of the first line,
		// LF, CRLF and a lone CR all end a line, and a backslash at the
		// end of a rule is refused where it stands.
		{in: "\xef\xbb\xbf# comment\ngit status\n", want: []string{"git status"}, nums: []int{2}},
		{in: "\xef\xbb\xbfgit status\n", want: []string{"git status"}, nums: []int{1}},
		{in: "# comment\rgit status\rgit diff\r", want: []string{"git status", "git diff"}, nums: []int{2, 3}},
		{in: "git status\r\rgit diff", want: []string{"git status", "git diff"}, nums: []int{1, 3}},
		{in: "git status\r\n\r\ngit diff\n\rls", want: []string{"git status", "git diff", "ls"}, nums: []int{1, 3, 5}},
		{in: "git push \\\n  --force\n", wantErr: "f.txt:1:10: a \\ at the end of a line does not continue"},
		{in: "ok\r  git push \\\r--force\r", wantErr: "f.txt:2:12: a \\ at the end of a line"},
		{in: "git push \\  # c\n", wantErr: "f.txt:1:10: a \\ at the end"},
		{in: "grep x\\\\\n", want: []string{`grep x\\`}},
		{in: "# a comment \\\ngit status\n", want: []string{"git status"}, nums: []int{2}},
		{in: "\x00git status\n", wantErr: "f.txt:1:1: NUL byte"},
		{in: "\xef\xbb\xbf\xef\xbb\xbfgit status\n", wantErr: "f.txt:1"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.in] {
			t.Errorf("duplicate test input %q", tc.in)
		}
		seen[tc.in] = true
		t.Logf("input: %q", tc.in)
		lines, err := ParseList("f.txt", []byte(tc.in), "read_only", ".")
		if tc.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("ParseList(%q) error = %v, want prefix %q", tc.in, err, tc.wantErr)
			}
			if lines != nil {
				t.Errorf("ParseList(%q) returned lines with an error", tc.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseList(%q): %v", tc.in, err)
			continue
		}
		var texts []string
		var nums []int
		for _, l := range lines {
			texts = append(texts, l.Text)
			nums = append(nums, l.Num)
			if l.File != "f.txt" || l.Category != "read_only" || l.Overlay != "." {
				t.Errorf("ParseList(%q): provenance %+v", tc.in, l)
			}
		}
		if diff := cmp.Diff(tc.want, texts); diff != "" {
			t.Errorf("ParseList(%q) texts (-want +got):\n%s", tc.in, diff)
		}
		if tc.nums != nil {
			if diff := cmp.Diff(tc.nums, nums); diff != "" {
				t.Errorf("ParseList(%q) line numbers (-want +got):\n%s", tc.in, diff)
			}
		}
		// Every line read must expand.
		for _, l := range lines {
			if g, err := Grants(l.Text); err != nil || len(g) == 0 {
				t.Errorf("Grants(%q) = %v, %v", l.Text, g, err)
			}
		}
	}
}

func TestParseServices(t *testing.T) {
	got, err := ParseServices("s.txt", []byte("# units\nfoo.service\n\nbar@1.service # why\nfoo.service\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"foo.service", "bar@1.service", "foo.service"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"a b\n", "x;y\n", "--now\n", "$(id)\n"} {
		if _, err := ParseServices("s.txt", []byte("ok\n"+bad)); err == nil || !strings.HasPrefix(err.Error(), "s.txt:2: ") {
			t.Errorf("ParseServices(%q) error = %v, want s.txt:2: …", bad, err)
		}
	}
}

func TestLists(t *testing.T) {
	for _, p := range Profiles {
		allow, ask, deny, err := Lists(p)
		if err != nil {
			t.Fatal(err)
		}
		// Each category appears in at most one list; never_allow is always denied.
		seen := map[string]int{}
		for _, l := range [][]string{allow, ask, deny} {
			for _, c := range l {
				if !IsCategory(c) {
					t.Errorf("%s: unknown category %q", p, c)
				}
				seen[c]++
			}
		}
		for c, n := range seen {
			if n > 1 {
				t.Errorf("%s: %s in %d lists", p, c, n)
			}
		}
		if diff := cmp.Diff([]string{"never_allow"}, deny); diff != "" {
			t.Errorf("%s deny (-want +got):\n%s", p, diff)
		}
		if slices.Contains(allow, "never_allow") {
			t.Errorf("%s allows never_allow", p)
		}
	}
	allow, ask, _, _ := Lists("local-changes")
	if diff := cmp.Diff([]string{"read_only", "local_changes", "device_ops"}, allow); diff != "" {
		t.Errorf("local-changes allow (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"batch_execution", "cache_destruction", "external_changes"}, ask); diff != "" {
		t.Errorf("local-changes ask (-want +got):\n%s", diff)
	}
	allow, ask, _, _ = Lists("full-access")
	if len(allow) != 6 || len(ask) != 0 {
		t.Errorf("full-access: allow %v ask %v", allow, ask)
	}
	allow[0] = "changed"
	if again, _, _, _ := Lists("full-access"); again[0] != "read_only" {
		t.Errorf("Lists shares its slices")
	}
	_, _, _, err := Lists("yolo")
	if err == nil || err.Error() != `unknown profile "yolo" (profiles: read-only, local-changes, external-changes, full-access)` {
		t.Errorf("Lists(yolo) error = %v", err)
	}
}

// TestPlainWords checks the fast path against the shell parser.
func TestPlainWords(t *testing.T) {
	inputs := []string{
		"git status", "  git   status  ", "git status # c", "git status# c", "a#b c", "#x",
		"ls *.go", "rm -rf ~", "rm -rf ~/", "x ~user", "fx -t host:8022 test //a:b", "a=b c",
		"c a=b", "time git status", "if x", "export A", "go test -run=^Foo$", "x\t\ty", "a ! b",
		"rm -rf /*", "sed -n 1,10p", "cmd %s ^x", "a\t#c", "a ?", "[ x ]", "x [a]",
	}
	tree, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range tree.Lines {
		inputs = append(inputs, l.Text)
	}
	for _, tc := range grantTests {
		inputs = append(inputs, tc.line)
	}
	slow := &lineParser{sh: newLineParser().sh}
	fast := 0
	for _, in := range inputs {
		words, end, ok := plainWords(in)
		if !ok {
			continue
		}
		fast++
		f, err := slow.sh.Parse(strings.NewReader(in), "")
		if err != nil {
			t.Errorf("plainWords(%q) ok, parser: %v", in, err)
			continue
		}
		var want []string
		wantEnd := len(in)
		for _, c := range f.Last {
			wantEnd = min(wantEnd, int(c.Hash.Offset()))
		}
		for _, st := range f.Stmts {
			for _, c := range st.Comments {
				wantEnd = min(wantEnd, int(c.Hash.Offset()))
			}
			call, ok := st.Cmd.(*syntax.CallExpr)
			if !ok || len(call.Assigns) > 0 || len(f.Stmts) != 1 {
				t.Errorf("plainWords(%q) ok, but it is no simple command", in)
				continue
			}
			for _, w := range call.Args {
				lit, err := literal(w)
				if err != nil {
					t.Errorf("plainWords(%q) ok, parser: %v", in, err)
				}
				want = append(want, lit)
			}
		}
		if !cmp.Equal(want, words) || end != wantEnd {
			t.Errorf("plainWords(%q) = %q, %d; parser %q, %d", in, words, end, want, wantEnd)
		}
	}
	if fast < 100 {
		t.Errorf("fast path taken for %d inputs only", fast)
	}
}
