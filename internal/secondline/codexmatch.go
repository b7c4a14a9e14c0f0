package secondline

import "slices"

// codexRule is one prefix_rule as written, its alternatives resolved.
type codexRule struct {
	pattern [][]string
}

// matches is execpolicy's PrefixPattern::matches_prefix
// (codex-rs/execpolicy/src/rule.rs): the command has at least as many
// words as the pattern, and each of its first words is one of the
// pattern's alternatives at that place.
func (r codexRule) matches(argv []string) bool {
	if len(argv) < len(r.pattern) {
		return false
	}
	for i, alts := range r.pattern {
		if !slices.Contains(alts, argv[i]) {
			return false
		}
	}
	return true
}

// codexDecide is Codex's reading of a line with the rules: a line of
// plain commands (words joined by ;, &&, || and |) is checked command by
// command, as Codex does with the script of `bash -lc` it can parse; any
// other line is one command, bash, that no rule names.
func codexDecide(rules []codexRule, line string) Decision {
	cmds, ok := commands(line)
	if !ok {
		return ""
	}
	for _, c := range cmds {
		if len(c.assigns) > 0 {
			return ""
		}
	}
	for _, c := range cmds {
		for _, r := range rules {
			if r.matches(c.words) {
				return Deny
			}
		}
	}
	return ""
}
