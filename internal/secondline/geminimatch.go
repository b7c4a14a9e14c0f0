package secondline

import (
	"encoding/json"
	"regexp"
)

// geminiRule is one [[rule]] as written.
type geminiRule struct {
	re *regexp.Regexp // nil: every shell command
}

func newGeminiRule(commandRegex string) geminiRule {
	if commandRegex == "" {
		return geminiRule{}
	}
	return geminiRule{re: regexp.MustCompile(`"command":"` + commandRegex)}
}

// geminiDecide is Gemini CLI's reading of a line with the rules
// (packages/core/src/policy: buildArgsPatterns, ruleMatches,
// checkShellCommand): a rule matches when its expression, after
// `"command":"`, is found in the arguments as stable JSON; a deny rule of
// the whole line refuses it, and so does one of any of its commands,
// which Gemini checks again one by one.
func geminiDecide(rules []geminiRule, line string) Decision {
	texts := []string{line}
	if cmds, ok := commands(line); ok && len(cmds) > 1 {
		for _, c := range cmds {
			texts = append(texts, c.text)
		}
	}
	for _, t := range texts {
		args, err := json.Marshal(map[string]string{"command": t})
		if err != nil {
			return ""
		}
		for _, r := range rules {
			if r.re == nil || r.re.Match(args) {
				return Deny
			}
		}
	}
	return ""
}

// geminiSafe is Gemini CLI's isSafeRegExp: false for an expression it
// refuses to load (longer than 2048 characters, or with a quantified
// group that holds a quantifier).
func geminiSafe(re string) bool {
	unsafe := regexp.MustCompile(`\([^)]*[*+?{].*\)[*+?{]`)
	return len(re) <= 2048 && !unsafe.MatchString(re)
}
