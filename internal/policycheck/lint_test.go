package policycheck

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/google/go-cmp/cmp"
)

// manifestLines reads "category: rule" lines as manifest lines of the
// root overlay, numbered per category file.
func manifestLines(spec string) []manifest.Line {
	var out []manifest.Line
	num := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(spec), "\n") {
		cat, text, _ := strings.Cut(strings.TrimSpace(l), ": ")
		overlay, file := ".", ".agents/config/permissions/"+cat+".txt"
		if v, c, ok := strings.Cut(cat, "/"); ok {
			overlay, cat = "vendor/"+v, c
			file = overlay + "/.agents/config/permissions/" + cat + ".txt"
		}
		num[file]++
		out = append(out, manifest.Line{Text: text, Category: cat, Overlay: overlay, File: file, Num: num[file]})
	}
	return out
}

func TestLint(t *testing.T) {
	pinHome(t)
	tests := []struct {
		in   string
		want []string // "file:line kind"
	}{
		// Runners, interpreters, shells, build tools; writers in read_only.
		// find is none: its -exec, -execdir, -ok and -delete are known
		// (the shim decides what -exec runs; the grants leave them out).
		{"read_only: env\nread_only: xargs\nlocal_changes: jiri runp\nread_only: find", []string{
			"read_only.txt:1 risky", "read_only.txt:2 risky", "local_changes.txt:1 risky"}},
		{"read_only: awk\nread_only: perl\nlocal_changes: python3 tools/gen.py\nbatch_execution: bash", []string{
			"read_only.txt:1 risky", "read_only.txt:2 risky", "local_changes.txt:1 risky", "batch_execution.txt:1 risky"}},
		{"read_only: sed\nread_only: sed -n", []string{"read_only.txt:1 risky"}},
		// A build tool runs the checkout's recipes: local_changes is for
		// that, read_only is not.
		{"read_only: python3 --version\nread_only: make -n\nlocal_changes: make\nlocal_changes: npm run\nread_only: go generate", []string{"read_only.txt:2 risky", "read_only.txt:3 risky"}},
		{"read_only: tee\nlocal_changes: tee\nread_only: cat", []string{"read_only.txt:1 risky"}},
		{"local_changes: command(*)", []string{"local_changes.txt:1 risky"}},
		// From the program table, in read_only only: a program text it
		// runs, operands it always writes. Options that run code or write
		// (rg --pre, gofmt -w) are none: the shim asks for them and the
		// grants leave them out.
		{"read_only: rg\nread_only: rg --files\nread_only: git log\nread_only: cat\nlocal_changes: rg\nread_only: gofmt", nil},
		{"read_only: uniq\nread_only: xxd\nlocal_changes: uniq\nread_only: gawk", []string{
			"read_only.txt:1 risky", "read_only.txt:2 risky", "read_only.txt:3 risky"}},
		{"never_allow: env\nnever_allow: bash", nil},
		// Shadowed: an allow rule a deny or ask rule always overrides, an
		// ask rule a deny rule does; the built-in never-allow list too.
		{"read_only: git push --force origin\nnever_allow: git push -f", []string{"read_only.txt:1 shadowed"}},
		{"local_changes: git clean -fdx", []string{"local_changes.txt:1 shadowed"}},
		{"read_only: git push origin main\nexternal_changes: git push", []string{"read_only.txt:1 shadowed"}},
		{"cache_destruction: rm -rf out\nnever_allow: rm -r", []string{"cache_destruction.txt:1 shadowed"}},
		{"local_changes: git push\nnever_allow: git push --force", nil},
		{"local_changes: rm -rf out/tmp\nnever_allow: rm -rf out/x", nil},
		// Duplicates in one category, any overlay, any spelling.
		{"read_only: git status\ngoogle/read_only: git status", []string{"vendor/google/.agents/config/permissions/read_only.txt:1 duplicate"}},
		// Another spelling of a deny rule is a deny grant of its own for
		// an agent applying the grants itself: no duplicate. The same
		// spelling twice is.
		{"never_allow: rm -rf /tmp/x\nnever_allow: rm -fr /tmp/x\nnever_allow: rm -r -f /tmp/x\nnever_allow: rm --recursive --force /tmp/x", nil},
		{"never_allow: rm -rf /tmp/x\nnever_allow: rm  -rf  /tmp/x\ngoogle/never_allow: rm -rf /tmp/x",
			[]string{"never_allow.txt:2 duplicate", "vendor/google/.agents/config/permissions/never_allow.txt:1 duplicate"}},
		{"local_changes: git commit -a\nlocal_changes: git commit --all", []string{"local_changes.txt:2 duplicate"}},
		{"read_only: git log\nlocal_changes: git log", nil},
		{"read_only: git log\nread_only: git log --oneline", nil},
		// Unknown subcommands.
		{"read_only: git stauts\nread_only: git -C x lgo\nread_only: go tset\nread_only: git status", []string{
			"read_only.txt:1 unknown", "read_only.txt:2 unknown", "read_only.txt:3 unknown"}},
		{"read_only: git lfs ls-files\nread_only: go vet", nil},
		// Deny rules that miss a usual spelling.
		{"never_allow: npm publish --force", []string{"never_allow.txt:1 spelling"}},
		{"never_allow: npm publish --force\nnever_allow: npm publish -f", nil},
		{"never_allow: rm -rf /tmp/x\nnever_allow: git push --force\nnever_allow: git branch -D\nnever_allow: chmod -R 777 /", nil},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		t.Logf("input: %q", tc.in)
		var got []string
		for _, f := range Lint(manifestLines(tc.in)) {
			got = append(got, fmt.Sprintf("%s:%d %s", strings.TrimPrefix(f.File, ".agents/config/permissions/"), f.Line, f.Kind))
		}
		slices.Sort(got)
		slices.Sort(tc.want)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Lint(%q) (-want +got):\n%s", tc.in, diff)
			for _, f := range Lint(manifestLines(tc.in)) {
				t.Log(f)
			}
		}
	}
}

// Each finding names the fix; a typo gets the nearest subcommand.
func TestLintMessages(t *testing.T) {
	pinHome(t)
	fs := Lint(manifestLines("read_only: git stauts\nnever_allow: npm publish --force\nread_only: env"))
	var got []string
	for _, f := range fs {
		got = append(got, f.String())
	}
	want := []string{
		".agents/config/permissions/never_allow.txt:1: spelling: `npm publish --force`: does not deny `npm publish -f`\n\tfix: add each as a line of its own in never_allow.txt (where it means the same), or a flag alias to the program table",
		".agents/config/permissions/read_only.txt:1: unknown: `git stauts`: git has no subcommand \"stauts\": the rule matches nothing\n\tfix: did you mean `git status`?",
		".agents/config/permissions/read_only.txt:2: risky: `env`: env is a runner: it runs any program named after it (env rm -rf /), and read_only allows it unattended\n\tfix: remove it and allow the commands it runs instead (agent-shim decides the command a runner runs; the agent's own grant may allow it whole)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Lint on the Fuchsia-like fixture: read_only allows env, awk and sed,
// local_changes jiri runp; and the other kinds of finding.
func TestLintFuchsia(t *testing.T) {
	tree := loadTree(t, fixture(t, "fuchsia"))
	var text, js strings.Builder
	n, err := WriteLint(&text, tree, false)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "fuchsia-lint.txt", text.String())
	if m, err := WriteLint(&js, tree, true); err != nil || m != n {
		t.Fatalf("WriteLint(json): %d, %v; want %d", m, err, n)
	}
	var back []Finding
	if err := json.Unmarshal([]byte(js.String()), &back); err != nil || len(back) != n {
		t.Fatalf("JSON: %d findings, %v", len(back), err)
	}
	for _, want := range []string{"env", "awk", "sed", "jiri runp", "git stauts", "npm publish --force"} {
		found := false
		for _, f := range back {
			found = found || f.Rule == want
		}
		if !found {
			t.Errorf("no finding for `%s`", want)
		}
	}
}

// lintRisky leaves out a program's options that run code or write
// because the grants leave them out: for every such option of the
// built-in table, the grant of its block matches no command that uses
// it, spelled with its value attached or apart.
func TestLintOptionsOutOfGrants(t *testing.T) {
	for _, f := range programs.Builtin().Facts() {
		switch f.Kind {
		case programs.Exec, programs.Runs, programs.Ask, programs.Write, programs.Writes, programs.Inline,
			programs.Downloads, programs.Ex, programs.Code:
		default:
			continue
		}
		grants, err := manifest.Grants(f.Key)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		res := make([]*regexp.Regexp, len(grants))
		for i, g := range grants {
			res[i] = regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(g, "command(regex:"), ")"))
		}
		for _, a := range f.Args {
			opt, prefix, _ := strings.Cut(a, "@")
			if !strings.HasPrefix(opt, "-") {
				continue // an operand shape or +CMD
			}
			val := strings.TrimPrefix(prefix, "*") + "x"
			for _, line := range []string{f.Key + " " + opt + " " + val + " y", f.Key + " " + opt + "=" + val + " y", f.Key + " y " + opt} {
				for _, re := range res {
					if re.MatchString(line) {
						t.Errorf("%s: the grant of `%s` matches %q", f, f.Key, line)
					}
				}
			}
		}
	}
}
