package matcher

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Glob compiles a glob as the policy's patterns are written (config.json's
// tool patterns and path scope, tool rules' arguments): `**` matches
// anything including `/` (and
// `**/` also nothing), `*` anything but `/`, `?` one character but `/`,
// `[…]` a class of characters and ranges (`a-z`), `\` quoting the next
// character inside a class too. It is path.Match's syntax but for these
// documented differences: `**`; `[!…]` negates as `[^…]` does; a negated
// class never matches `/`; a `]` right after `[` (or `[!`, `[^`) is a
// literal; and a pattern must be valid UTF-8. FuzzGlob holds it to
// path.Match.
func Glob(glob string) (*regexp.Regexp, error) {
	if !utf8.ValidString(glob) {
		return nil, errors.New("glob is not valid UTF-8")
	}
	var sb strings.Builder
	sb.WriteString(`(?s)^`)
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '*':
			n := 1
			for i+1 < len(glob) && glob[i+1] == '*' {
				i++
				n++
			}
			switch {
			case n == 1:
				sb.WriteString(`[^/]*`)
			case i+1 < len(glob) && glob[i+1] == '/':
				i++
				sb.WriteString(`(?:.*/)?`)
			default:
				sb.WriteString(`.*`)
			}
		case '?':
			sb.WriteString(`[^/]`)
		case '\\':
			if i+1 == len(glob) {
				return nil, errors.New("trailing backslash")
			}
			_, w := utf8.DecodeRuneInString(glob[i+1:])
			sb.WriteString(regexp.QuoteMeta(glob[i+1 : i+1+w]))
			i += w
		case '[':
			n, err := globClass(&sb, glob[i+1:])
			if err != nil {
				return nil, err
			}
			i += n
		default:
			sb.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	sb.WriteString(`$`)
	return regexp.Compile(sb.String())
}

// globClass writes the regexp of the class whose text (after `[`) starts
// s, and returns the length of that text, closing `]` included.
func globClass(sb *strings.Builder, s string) (int, error) {
	i := 0
	neg := i < len(s) && (s[i] == '!' || s[i] == '^')
	if neg {
		i++
	}
	// char reads one character of a range: `\` quotes the next one; an
	// unquoted `-`, or `]` but as the class's first character, cannot be
	// one.
	char := func(first bool) (rune, error) {
		if i == len(s) {
			return 0, errors.New("unclosed [ in glob")
		}
		c := s[i]
		switch {
		case c == '\\':
			i++
			if i == len(s) {
				return 0, errors.New("unclosed [ in glob")
			}
		case c == '-' || c == ']' && !first:
			return 0, fmt.Errorf("unquoted %q in a [ ] class of a glob", c)
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		return r, nil
	}
	var class strings.Builder
	for first := true; ; first = false {
		if i == len(s) {
			return 0, errors.New("unclosed [ in glob")
		}
		if s[i] == ']' && !first {
			i++
			break
		}
		lo, err := char(first)
		if err != nil {
			return 0, err
		}
		hi := lo
		if i < len(s) && s[i] == '-' {
			i++
			if hi, err = char(false); err != nil {
				return 0, err
			}
		}
		if lo <= hi { // a range backwards matches nothing, as in path.Match
			fmt.Fprintf(&class, `\x{%x}-\x{%x}`, lo, hi)
		}
	}
	switch {
	case neg:
		sb.WriteString(`[^/` + class.String() + `]`)
	case class.Len() == 0:
		sb.WriteString(`[^\x00-\x{10ffff}]`) // nothing
	default:
		sb.WriteString(`[` + class.String() + `]`)
	}
	return i, nil
}
