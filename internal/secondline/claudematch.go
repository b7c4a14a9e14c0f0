package secondline

import (
	"regexp"
	"strings"
	"sync"
)

// claudeRule is one Bash(…) rule as written.
type claudeRule struct {
	pattern  string // "" for the bare tool name
	decision Decision
	re       *regexp.Regexp
}

func newClaudeRule(pattern string, d Decision) claudeRule {
	return claudeRule{pattern: pattern, decision: d, re: claudeRegexp(pattern)}
}

// claudeDecide is Claude Code's reading of a line with the rules, as its
// documentation and the expressions in its release give it: the line is
// split into its commands; each command loses the variable assignments
// and the wrappers Claude strips before matching (timeout, time, nice,
// stdbuf, nohup, command, builtin, noglob); deny rules are read before
// ask rules; a rule matches a command when its pattern does (see
// claudeMatch).
func claudeDecide(rules []claudeRule, line string) Decision {
	var texts []string
	if cmds, ok := commands(line); ok {
		for _, c := range cmds {
			texts = append(texts, claudeStrip(c.text))
		}
	} else {
		texts = []string{claudeStrip(strings.TrimSpace(line))}
	}
	best := Decision("")
	for _, r := range rules {
		for _, t := range texts {
			if r.pattern == "" || r.re.MatchString(t) {
				if r.decision == Deny {
					return Deny
				}
				best = Ask
			}
		}
	}
	return best
}

// The wrappers Claude Code strips before matching a Bash rule.
// Compiled when first used: never at a process's start (the hook's).
var claudeWrappers = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`^timeout[ \t]+(?:(?:--(?:foreground|preserve-status|verbose)|--(?:kill-after|signal)=[A-Za-z0-9_.+-]+|--(?:kill-after|signal)[ \t]+[A-Za-z0-9_.+-]+|-v|-[ks][ \t]+[A-Za-z0-9_.+-]+|-[ks][A-Za-z0-9_.+-]+)[ \t]+)*(?:--[ \t]+)?\d+(?:\.\d+)?[smhd]?[ \t]+`),
		regexp.MustCompile(`^time[ \t]+(?:--[ \t]+)?`),
		regexp.MustCompile(`^nice(?:[ \t]+-n[ \t]+-?\d+|[ \t]+-\d+)?[ \t]+(?:--[ \t]+)?`),
		regexp.MustCompile(`^stdbuf(?:[ \t]+-[ioe][LN0-9]+)+[ \t]+(?:--[ \t]+)?`),
		regexp.MustCompile(`^nohup[ \t]+(?:--[ \t]+)?`),
		regexp.MustCompile(`^command(?:[ \t]+-p+)*(?:[ \t]+--)?[ \t]+`),
		regexp.MustCompile(`^builtin(?:[ \t]+--)?[ \t]+`),
		regexp.MustCompile(`^noglob[ \t]+`),
		regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_./:-]+[ \t]+`),
	}
})

func claudeStrip(cmd string) string {
	for changed := true; changed; {
		changed = false
		for _, re := range claudeWrappers() {
			if loc := re.FindStringIndex(cmd); loc != nil && loc[1] < len(cmd) && cmd[loc[1]] != '-' {
				cmd = cmd[loc[1]:]
				changed = true
			}
		}
	}
	return cmd
}

// claudeRegexp is how a Bash rule's content matches a command: name:*
// is the command or the command followed by a space and more; a pattern
// with * is anchored at both ends, * standing for any run of characters,
// and a single trailing " *" also matches nothing; anything else is the
// whole command, exactly.
func claudeRegexp(pattern string) *regexp.Regexp {
	if prefix, ok := strings.CutSuffix(pattern, ":*"); ok {
		return regexp.MustCompile(`(?s)^` + regexp.QuoteMeta(prefix) + `(?: .*)?$`)
	}
	if !strings.Contains(pattern, "*") {
		return regexp.MustCompile(`^` + regexp.QuoteMeta(pattern) + `$`)
	}
	var re strings.Builder
	re.WriteString(`(?s)^`)
	body, tail := pattern, ""
	if strings.Count(pattern, "*") == 1 && strings.HasSuffix(pattern, " *") {
		body, tail = strings.TrimSuffix(pattern, " *"), `(?: .*)?`
	}
	for i, part := range strings.Split(body, "*") {
		if i > 0 {
			re.WriteString(".*")
		}
		re.WriteString(regexp.QuoteMeta(part))
	}
	re.WriteString(tail + "$")
	return regexp.MustCompile(re.String())
}
