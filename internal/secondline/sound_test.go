package secondline

import (
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/programs"
)

// instances returns commands a pattern of alternatives matches: every
// alternative of every position at least once (the others at their first).
func instances(pattern [][]string) [][]string {
	base := make([]string, len(pattern))
	for i, alts := range pattern {
		base[i] = alts[0]
	}
	out := [][]string{base}
	for i, alts := range pattern {
		for _, a := range alts[1:] {
			c := append([]string(nil), base...)
			c[i] = a
			out = append(out, c)
		}
	}
	return out
}

// TestRunners holds every runner to the matcher: with each choice of its
// words before `rm -r /`, the never-allow list refuses the line.
func TestRunners(t *testing.T) {
	denies := policyDenies(t, Rules(policy2(t), neverAllow))
	for _, r := range runners() {
		for _, c := range instances(r.words) {
			line := strings.Join(c, " ") + " rm -r /"
			if !denies(line) {
				t.Errorf("%q: the matcher does not refuse it: %v is not a runner it unwraps", line, c)
			}
		}
	}
}

// TestProgramSpellings: every spelling of a program runs it, for the
// matcher.
func TestProgramSpellings(t *testing.T) {
	denies := policyDenies(t, Rules(policy2(t), neverAllow))
	for _, sp := range append(programSpellings("git"), dashedSpellings("push")...) {
		line := sp + " push --force"
		if strings.Contains(sp, "git-push") {
			line = sp + " --force"
		}
		if !denies(line) {
			t.Errorf("%q: the matcher does not refuse it", line)
		}
	}
}

// TestCodexSound holds the Codex rules to the policy: every command a
// rule forbids (each alternative of each word at least once), the policy
// refuses too. The second line is never stricter than the hook.
func TestCodexSound(t *testing.T) {
	rules := Rules(policy2(t), neverAllow)
	denies := policyDenies(t, rules)
	out := Codex(Compile(rules, programs.Builtin()))
	if out.Patterns == 0 {
		t.Fatal("no rules")
	}
	crs := codexRulesOf(out)
	seen := map[string]bool{}
	for _, r := range crs {
		// The runners before the program and the program's spellings
		// are held to the matcher by TestRunners and
		// TestProgramSpellings: here the program by name stands for
		// all of them.
		var pat [][]string
		for i, alts := range r.pattern {
			if slices.Contains(alts, "/usr/bin/"+alts[0]) {
				pat = append([][]string{alts[:1]}, r.pattern[i+1:]...)
				break
			}
		}
		if pat == nil {
			pat = r.pattern // git-push
		}
		for _, argv := range instances(pat) {
			line := strings.Join(argv, " ")
			if seen[line] {
				continue
			}
			seen[line] = true
			if !denies(line) {
				t.Errorf("%q: forbidden by the Codex rules, not refused by the policy", line)
			}
		}
	}
	t.Logf("%d rules, %d commands checked", len(crs), len(seen))
}

// TestClaudeSound: every command a Claude rule matches with each * as a
// word, the policy refuses (deny) or asks at least (ask).
func TestClaudeSound(t *testing.T) {
	rules := Rules(policy2(t), neverAllow)
	denies := policyDenies(t, rules)
	out := Claude(Compile(rules, programs.Builtin()))
	for _, r := range claudeRulesOf(out) {
		if r.decision != Deny || r.pattern == "" {
			continue
		}
		// git's options before the subcommand: -* stands for -C dir.
		line := strings.ReplaceAll(strings.ReplaceAll(r.pattern, " -* ", " -C dir "), "*", "x")
		if !denies(line) {
			t.Errorf("%q (Bash(%s)): denied by the Claude rules, not refused by the policy", line, r.pattern)
		}
	}
}

func codexRulesOf(o Output) []codexRule   { return o.codex }
func claudeRulesOf(o Output) []claudeRule { return o.claude }

// TestGeminiSafe: Gemini CLI loads every expression written (it drops one
// it deems a ReDoS risk, with a warning only).
func TestGeminiSafe(t *testing.T) {
	out := Gemini(policy2Compiled(t))
	n := 0
	for _, line := range strings.Split(string(out.Text), "\n") {
		re, ok := strings.CutPrefix(line, "commandRegex = '")
		if !ok {
			continue
		}
		n++
		re = strings.TrimSuffix(re, "'")
		if !geminiSafe(`"command":"` + re) {
			t.Errorf("Gemini CLI refuses %s", re)
		}
	}
	if n == 0 {
		t.Fatal("no commandRegex written")
	}
}
