package secondline

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
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
		args, ok := stableArgs(t)
		if !ok {
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

// stableArgs is the shell tool's arguments as Gemini CLI's stableStringify
// writes them for the policy's expressions: keys sorted, each top-level
// member between NULs, strings as JSON.stringify writes them (no HTML
// escapes). A command with U+2028 or U+2029, which Go escapes and
// JavaScript does not, is not decided.
func stableArgs(command string) ([]byte, bool) {
	if strings.ContainsAny(command, "\u2028\u2029") {
		return nil, false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(command); err != nil {
		return nil, false
	}
	return []byte("{\x00\"command\":" + strings.TrimSuffix(b.String(), "\n") + "\x00}"), true
}

// geminiSafe is Gemini CLI's isSafeRegExp: false for an expression it
// refuses to load (longer than 2048 characters, or with a quantified
// group that holds a quantifier).
func geminiSafe(re string) bool {
	unsafe := regexp.MustCompile(`\([^)]*[*+?{].*\)[*+?{]`)
	return len(re) <= 2048 && !unsafe.MatchString(re)
}
