package matcher

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// Regex grants by the word they require.
//
// A config.json can hold thousands of command(regex:…) grants written by
// hand (or left over), which no managed rule stands for. Compiling all of
// them for every command costs seconds; most name one program. Each such
// grant is therefore indexed by a key: a literal word every text the regex
// can match holds as a whole token, tokens being the runs of characters
// between separators (blanks, /, \, ' and "). A command is matched only
// against the grants whose key is a token of the texts matchRegex tries
// (see commandKeys), so a grant is compiled only when a command could
// match it. The key is exact: a grant the index leaves out of a command
// is one its regex cannot match there.
//
// The key of a regex (see grantKey) is a literal at the top level of its
// concatenation (so every match holds it) that is bounded on the left by
// a separator or by ^ (looking through parts that can match empty), and
// on the right by a separator or by $. This covers what agents-setup
// writes (^, env assignments and a path ending in /, the program, a
// blank) and the hand-written shapes ^tool\s, ^\s*tool$. Anything else (an
// alternation at the top, no anchor, (?i), a literal inside a group) stays
// global: matched against every command, as before.

// isSep reports whether r separates the tokens that keys are.
func isSep(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', '/', '\\', '\'', '"':
		return true
	}
	return false
}

// grantKey returns the key a command(regex:…) grant is indexed by, "" when
// the grant is not a regex grant or may match any command. A regex that
// does not compile is keyed by the literal word after its ^ when it has
// one (so that a broken deny grant fails closed for that program's
// commands only), else "".
func grantKey(text string) string {
	name, body, ok := grantShape(strings.TrimSpace(text))
	if !ok || name != "command" {
		return ""
	}
	src, ok := strings.CutPrefix(body, "regex:")
	if !ok {
		return ""
	}
	if key, ok := fastKey(src); ok {
		return key
	}
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return brokenKey(src)
	}
	return regexKey(re.Simplify())
}

// fastKey keys the common hand-written shape without parsing the regex
// (a hook call may read thousands): ^, a word of letters, digits, _ and
// -, then \s, [ \t] or a blank not made optional by what follows, or a $
// that ends the regex; and no | outside groups and classes. ok is false
// when src is not of that shape (grantKey then parses it).
func fastKey(src string) (key string, ok bool) {
	rest, ok := strings.CutPrefix(src, "^")
	if !ok {
		return "", false
	}
	n := 0
	for n < len(rest) && (rest[n] == '_' || rest[n] == '-' || rest[n] >= 'a' && rest[n] <= 'z' ||
		rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= '0' && rest[n] <= '9') {
		n++
	}
	if n == 0 {
		return "", false
	}
	after := rest[n:]
	switch {
	case after == "$":
	case strings.HasPrefix(after, `\s`):
		after = after[2:]
	case strings.HasPrefix(after, `[ \t]`):
		after = after[5:]
	case strings.HasPrefix(after, " "):
		after = after[1:]
	default:
		return "", false
	}
	if after != "" && strings.ContainsRune("*?{", rune(after[0])) {
		return "", false
	}
	if !noTopLevelBar(src) {
		return "", false
	}
	return rest[:n], true
}

// noTopLevelBar reports whether src, read as a regex, has no | outside
// groups and character classes, with its parentheses balanced; false
// when unsure.
func noTopLevelBar(src string) bool {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\\':
			if i+1 < len(src) && src[i+1] == 'Q' {
				end := strings.Index(src[i+2:], `\E`)
				if end < 0 {
					return false
				}
				i += 2 + end + 1
				continue
			}
			i++
		case '[':
			// A class: ] right after [ or [^ is a member; [:name:]
			// and escapes inside.
			j := i + 1
			if j < len(src) && src[j] == '^' {
				j++
			}
			if j < len(src) && src[j] == ']' {
				j++
			}
			for ; j < len(src) && src[j] != ']'; j++ {
				switch {
				case src[j] == '\\':
					j++
				case src[j] == '[' && j+1 < len(src) && src[j+1] == ':':
					end := strings.Index(src[j+2:], ":]")
					if end < 0 {
						return false
					}
					j += 2 + end + 1
				}
			}
			if j >= len(src) {
				return false
			}
			i = j
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return false
			}
		case '|':
			if depth == 0 {
				return false
			}
		}
	}
	return depth == 0
}

// brokenKey keys a regex that does not parse: ^, optional blanks (\s* or
// [ \t]*), a word of letters, digits, _ and -, then \s, a blank, [ \t] or
// $. A | anywhere keeps it global: what the writer meant is not known.
func brokenKey(src string) string {
	if strings.Contains(src, "|") {
		return ""
	}
	rest, ok := strings.CutPrefix(src, "^")
	if !ok {
		return ""
	}
	for _, blank := range []string{`\s*`, `[ \t]*`, `\s+`, `[ \t]+`} {
		if r, ok := strings.CutPrefix(rest, blank); ok {
			rest = r
			break
		}
	}
	n := 0
	for n < len(rest) && (rest[n] == '_' || rest[n] == '-' || rest[n] >= 'a' && rest[n] <= 'z' ||
		rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= '0' && rest[n] <= '9') {
		n++
	}
	if n == 0 {
		return ""
	}
	for _, bound := range []string{`\s`, " ", `[ \t]`, "$"} {
		if strings.HasPrefix(rest[n:], bound) {
			return rest[:n]
		}
	}
	return ""
}

// regexKey finds the key of a parsed, simplified regex.
func regexKey(re *syntax.Regexp) string {
	subs := flatten(re, nil)
	for i, s := range subs {
		if s.Op != syntax.OpLiteral || s.Flags&syntax.FoldCase != 0 || len(s.Rune) == 0 {
			continue
		}
		left, right := endsBounded(subs[:i]), startsBounded(subs[i+1:])
		runes := s.Rune
		for a := 0; a < len(runes); {
			if isSep(runes[a]) {
				a++
				continue
			}
			b := a
			for b < len(runes) && !isSep(runes[b]) {
				b++
			}
			if (a > 0 || left) && (b < len(runes) || right) {
				return string(runes[a:b])
			}
			a = b
		}
	}
	return ""
}

// flatten appends the parts of re's top-level concatenation, looking
// through captures.
func flatten(re *syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpConcat:
		for _, s := range re.Sub {
			out = flatten(s, out)
		}
		return out
	case syntax.OpCapture:
		return flatten(re.Sub[0], out)
	}
	return append(out, re)
}

// endsBounded reports whether every match of the concatenation parts
// ends with a separator or is empty at the start of the text (or a line).
func endsBounded(parts []*syntax.Regexp) bool {
	for j := len(parts) - 1; j >= 0; j-- {
		empty, ok := edge(parts[j], false)
		if !ok {
			return false
		}
		if !empty {
			return true
		}
	}
	return false
}

// startsBounded reports whether every match of the concatenation parts
// starts with a separator or is empty at the end of the text (or a line).
func startsBounded(parts []*syntax.Regexp) bool {
	for _, p := range parts {
		empty, ok := edge(p, true)
		if !ok {
			return false
		}
		if !empty {
			return true
		}
	}
	return false
}

// edge looks at one end of re's matches (the first character when first,
// else the last): ok is that a match that has a character there has a
// separator, and one that has none asserts the matching end of the text;
// empty is that a match may have no character there and assert nothing,
// so the neighbouring part decides.
func edge(re *syntax.Regexp, first bool) (empty, ok bool) {
	switch re.Op {
	case syntax.OpNoMatch:
		return false, true
	case syntax.OpBeginText, syntax.OpBeginLine:
		if first {
			return true, true
		}
		return false, true
	case syntax.OpEndText, syntax.OpEndLine:
		if first {
			return false, true
		}
		return true, true
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true, true
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true, true
		}
		r := re.Rune[len(re.Rune)-1]
		if first {
			r = re.Rune[0]
		}
		// No separator has another case, so FoldCase changes nothing.
		return false, isSep(r)
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > 16 {
				return false, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if !isSep(r) {
					return false, false
				}
			}
		}
		return false, true
	case syntax.OpCapture, syntax.OpPlus:
		return edge(re.Sub[0], first)
	case syntax.OpStar, syntax.OpQuest:
		_, ok := edge(re.Sub[0], first)
		return true, ok
	case syntax.OpRepeat:
		e, ok := edge(re.Sub[0], first)
		return e || re.Min == 0, ok
	case syntax.OpConcat:
		parts := re.Sub
		for k := range parts {
			p := parts[k]
			if !first {
				p = parts[len(parts)-1-k]
			}
			e, ok := edge(p, first)
			if !ok {
				return false, false
			}
			if !e {
				return false, true
			}
		}
		return true, true
	case syntax.OpAlternate:
		empty, ok = false, true
		for _, s := range re.Sub {
			e, o := edge(s, first)
			empty, ok = empty || e, ok && o
		}
		return empty, ok
	}
	return false, false // any character
}

// commandKeys returns the tokens of the texts matchRegex matches a
// command against: its words, its assignments in front, and the plain
// word ("x") that stands for a word not known statically.
func commandKeys(c *call, assigns []string) []string {
	keys := []string{"x"}
	add := func(s string) {
		for len(s) > 0 {
			r, n := utf8.DecodeRuneInString(s)
			if isSep(r) {
				s = s[n:]
				continue
			}
			end := strings.IndexFunc(s, isSep)
			if end < 0 {
				end = len(s)
			}
			if tok := s[:end]; !slices.Contains(keys, tok) {
				keys = append(keys, tok)
			}
			s = s[end:]
		}
	}
	add(c.text())
	for _, a := range assigns {
		add(a)
	}
	return keys
}
