package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Line is one rule of a manifest: the command line as written (comment and
// surrounding blanks removed) and where it came from.
type Line struct {
	Text     string // the rule, e.g. "git push --force" or "command(regex:^foo$)"
	Category string // one of Categories, or "ad-hoc"
	Overlay  string // "." for the root, "vendor/<x>", "builtin" or "ad-hoc"
	File     string // the file, relative to the checkout root
	Num      int    // 1-based line number in File
}

// passThrough matches a line that is a grant already: name(…). The
// expressions of this package are compiled on first use, not at start: a
// hook run that finds nothing changed never parses a line.
var passThrough = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\(.*\)$`) })

// passThroughComment is a trailing comment after a pass-through grant. It may
// not hold ")", so that "command(regex:^a #b$)" keeps its "#b$".
var passThroughComment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[ \t]+#[^)]*$`) })

// ParseList reads a manifest or list file: one rule per line, blank lines and
// # comments skipped. name is the file's path as reported in errors and in
// Line.File; category and overlay are copied into every Line. A line that
// cannot be read (an unterminated quote, a NUL byte, invalid UTF-8, shell
// syntax beyond one simple command of literal words, an invalid regex in a
// command(regex:…) grant) is an error "name:line: problem", and no lines are
// returned.
func ParseList(name string, data []byte, category, overlay string) ([]Line, error) {
	return parseList(newLineParser(), name, data, category, overlay)
}

func parseList(p *lineParser, name string, data []byte, category, overlay string) ([]Line, error) {
	var lines []Line
	data = bytes.TrimPrefix(data, utf8BOM)
	num := 0
	for len(data) > 0 {
		num++
		// Lines end with LF, CRLF or a lone CR (old Mac editors): a file
		// of CR-only ends is many lines, not one rule.
		var raw []byte
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			end := data[i]
			raw, data = data[:i], data[i+1:]
			if end == '\r' && len(data) > 0 && data[0] == '\n' {
				data = data[1:] // CRLF
			}
		} else {
			raw, data = data, nil
		}
		text, err := p.clean(raw)
		if err == nil && text != "" {
			err = continuation(text, raw)
		}
		if err != nil {
			var pe *posError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d:%d: %s", name, num, pe.col, pe.msg)
			}
			return nil, fmt.Errorf("%s:%d: %w", name, num, err)
		}
		if text == "" {
			continue
		}
		lines = append(lines, Line{Text: text, Category: category, Overlay: overlay, File: name, Num: num})
	}
	return lines, nil
}

// utf8BOM is the byte order mark some editors put first in a UTF-8 file.
var utf8BOM = []byte("\xef\xbb\xbf")

// continuation refuses a rule that ends in an unescaped backslash: in a
// shell it would continue on the next line, here every line is one rule,
// and reading it either way would make rules nobody wrote.
func continuation(text string, raw []byte) error {
	n := len(text) - len(strings.TrimRight(text, `\`))
	if n%2 == 0 {
		return nil
	}
	col := strings.Index(string(raw), text) + len(text)
	return &posError{col, `a \ at the end of a line does not continue the rule; write each rule on one line`}
}

// lineParser reuses one shell parser across lines.
type lineParser struct{ sh *syntax.Parser }

func newLineParser() *lineParser {
	return &lineParser{sh: syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash))}
}

// clean returns the rule on raw with comments and blanks removed, "" for a
// blank or comment line, and checks that the rule can be expanded.
func (p *lineParser) clean(raw []byte) (string, error) {
	if !utf8.Valid(raw) {
		return "", fmt.Errorf("invalid UTF-8")
	}
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		return "", &posError{i + 1, "NUL byte"}
	}
	if i := bytes.Index(raw, utf8BOM); i >= 0 {
		return "", &posError{i + 1, "a byte order mark (U+FEFF) inside the file; only the file's first bytes may hold one"}
	}
	s := strings.TrimSpace(string(raw))
	if s == "" || s[0] == '#' {
		return "", nil
	}
	if g, ok, err := grantLine(s); ok || err != nil {
		return g, err
	}
	words, end, err := p.words(s)
	if err != nil {
		return "", err
	}
	if len(words) == 0 {
		return "", nil
	}
	return strings.TrimSpace(s[:end]), nil
}

// grantLine recognizes a pass-through grant, dropping a trailing comment.
func grantLine(s string) (string, bool, error) {
	if loc := passThroughComment().FindStringIndex(s); loc != nil && passThrough().MatchString(s[:loc[0]]) {
		s = s[:loc[0]]
	} else if !passThrough().MatchString(s) {
		return "", false, nil
	}
	if re, ok := strings.CutPrefix(s, "command(regex:"); ok {
		if _, err := regexp.Compile(strings.TrimSuffix(re, ")")); err != nil {
			return "", true, fmt.Errorf("invalid grant regex: %w", err)
		}
	}
	return s, true, nil
}

// words parses s as one simple shell command and returns its words after
// quote removal, and the offset where a trailing comment starts (len(s) if
// none). Anything but literal words is refused with a clear error: the
// grants are written for the command as text, and an expansion, operator or
// redirection has no single text.
func (p *lineParser) words(s string) ([]string, int, error) {
	if words, end, ok := plainWords(s); ok {
		return words, end, nil
	}
	f, err := p.sh.Parse(strings.NewReader(s), "")
	if err != nil {
		if pe, ok := err.(syntax.ParseError); ok {
			return nil, 0, &posError{int(pe.Pos.Col()), pe.Text}
		}
		return nil, 0, err
	}
	end := len(s)
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && int(c.Hash.Offset()) < end {
			end = int(c.Hash.Offset())
		}
		return true
	})
	if len(f.Stmts) == 0 {
		return nil, end, nil
	}
	if len(f.Stmts) > 1 {
		return nil, 0, posErr(f.Stmts[1].Pos(), "more than one command; write one rule per line")
	}
	st := f.Stmts[0]
	switch {
	case st.Negated:
		return nil, 0, posErr(st.Pos(), "! negation is not a command")
	case st.Background || st.Coprocess || st.Disown:
		return nil, 0, posErr(st.Semicolon, "& is not part of a command")
	case len(st.Redirs) > 0:
		return nil, 0, posErr(st.Redirs[0].Pos(), "redirections are not allowed in a rule")
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return nil, 0, posErr(st.Pos(), "not a simple command (operators, pipes and compound commands are not allowed)")
	}
	if len(call.Assigns) > 0 {
		return nil, 0, posErr(call.Assigns[0].Pos(), "variable assignments are not allowed; env prefixes are matched automatically")
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		lit, err := literal(w)
		if err != nil {
			return nil, 0, err
		}
		words = append(words, lit)
	}
	return words, end, nil
}

// plainWords splits s when it holds nothing the shell treats specially
// (most manifest lines), which gives the same words as the shell parser at a
// fraction of its cost. ok is false when s needs the parser.
func plainWords(s string) (words []string, end int, ok bool) {
	end = len(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '#':
			if i == 0 || s[i-1] == ' ' || s[i-1] == '\t' {
				end = i
				i = len(s)
			}
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == ' ', c == '\t':
		case strings.IndexByte("-_./:,@%+^*?=~", c) >= 0:
		default:
			return nil, 0, false
		}
	}
	words = strings.Fields(s[:end])
	if len(words) == 0 {
		return nil, end, true
	}
	if strings.IndexByte(words[0], '=') >= 0 || reserved[words[0]] {
		return nil, 0, false
	}
	for _, w := range words {
		if w[0] == '~' && len(w) > 1 && w[1] != '/' {
			return nil, 0, false // ~user: let the parser decide
		}
	}
	return words, end, true
}

// reserved are words the shell parser does not read as a simple command.
var reserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "esac": true,
	"for": true, "select": true, "while": true, "until": true, "do": true, "done": true,
	"function": true, "time": true, "coproc": true, "in": true, "declare": true, "local": true,
	"export": true, "readonly": true, "typeset": true, "nameref": true, "let": true,
}

func posErr(pos syntax.Pos, msg string) error {
	return &posError{int(pos.Col()), msg}
}

// posError is a problem at a column of a rule.
type posError struct {
	col int
	msg string
}

func (e *posError) Error() string { return fmt.Sprintf("%d: %s", e.col, e.msg) }

// literal returns the value of w after quote removal, or an error if w holds
// anything the shell would expand.
func literal(w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(part.Value, "{}") {
				cp := &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: part.Value}}}
				if syntax.SplitBraces(cp) {
					return "", posErr(part.Pos(), "brace expansion is not allowed; quote the braces or write one rule per word")
				}
			}
			b.WriteString(unescape(part.Value))
		case *syntax.SglQuoted:
			if part.Dollar {
				return "", posErr(part.Pos(), "$'…' quoting is not allowed; use '…'")
			}
			b.WriteString(part.Value)
		case *syntax.DblQuoted:
			if part.Dollar {
				return "", posErr(part.Pos(), "$\"…\" quoting is not allowed; use \"…\"")
			}
			for _, in := range part.Parts {
				lit, ok := in.(*syntax.Lit)
				if !ok {
					return "", posErr(in.Pos(), "expansions are not allowed in a rule; write the literal text")
				}
				b.WriteString(unescapeDbl(lit.Value))
			}
		default:
			return "", posErr(part.Pos(), "expansions are not allowed in a rule; write the literal text")
		}
	}
	return b.String(), nil
}

// unescape removes the backslashes of an unquoted literal.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDbl removes the backslashes that are escapes inside double quotes.
func unescapeDbl(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
