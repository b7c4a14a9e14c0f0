package shellparse

import (
	"fmt"
	"strings"
)

// maxSize is the longest text Parse reads, in bytes. A longer line is
// refused with an error rather than parsed.
const maxSize = 1 << 20

// maxNesting bounds how deeply constructs may nest in one text before Parse
// refuses it: brackets, substitutions, quotes, compound commands and the
// operators of one && / || / | chain or arithmetic expression all count.
// mvdan.cc/sh parses nesting by recursion and builds operator chains as
// trees as deep as the chain is long, so without this bound a few hundred
// kilobytes of `(` exhaust the Go stack (a fatal error, not a panic).
const maxNesting = 1000

// checkBounds refuses text longer than maxSize or nested deeper than
// maxNesting, before the parser sees it. It is a single pass over the
// bytes, a lexer just precise enough to over-approximate the parser's
// recursion: it treats as literal only what bash and the parser
// certainly read as literal (single-quoted text outside ${ }, escaped
// characters, comments after a blank, quoted here-documents), and a
// closing bracket only ends the construct it matches. Anything it is
// unsure of counts as nesting, so it may refuse a strange line the parser
// would read, never the other way round.
func checkBounds(src string) error {
	if len(src) > maxSize {
		return fmt.Errorf("line is longer than %d bytes (%d)", maxSize, len(src))
	}
	if len(src) <= maxNesting {
		// Every level of nesting the scan counts takes at least one
		// byte: a line this short cannot go deeper.
		return nil
	}
	b := &bounds{src: src, line: 1, lineStart: 0}
	return b.scan()
}

type frameKind uint8

const (
	fCmd      frameKind = iota // top level, ( ), $( ), { }
	fBacktick                  // ` `
	fDbl                       // " "
	fParam                     // ${ }
	fArith                     // $(( )), (( )), $[ ], arithmetic ( )
	fIf                        // if … fi
	fLoop                      // while/until/for/select … done
	fCase                      // case … esac
	fHdoc                      // unquoted here-document body
	fRawHdoc                   // quoted here-document body
)

type bframe struct {
	kind   frameKind
	closer string // ")", "}", "))", "]", "`", `"`
	ops    int    // operators of the current chain or expression
	delim  string // here-document delimiter
	strip  bool   // <<- strips leading tabs
}

type bounds struct {
	src       string
	stack     []bframe
	depth     int // len(stack) plus the ops of every frame
	line      int
	lineStart int
	pending   []bframe // here-documents whose bodies start at the next newline
	max       int      // the deepest depth seen
	letMode   bool     // the words of this command are let's expressions
	wordArith bool     // the current word is arithmetic (a subscript, let)
}

func (b *bounds) err(i int) error {
	return fmt.Errorf("%d:%d: nesting deeper than %d", b.line, i-b.lineStart+1, maxNesting)
}

func (b *bounds) push(i int, f bframe) error {
	b.stack = append(b.stack, f)
	b.depth++
	b.max = max(b.max, b.depth)
	if b.depth > maxNesting {
		return b.err(i)
	}
	return nil
}

func (b *bounds) pop() {
	top := b.stack[len(b.stack)-1]
	b.depth -= 1 + top.ops
	b.stack = b.stack[:len(b.stack)-1]
}

func (b *bounds) op(i int) error {
	if len(b.stack) == 0 {
		return nil
	}
	b.stack[len(b.stack)-1].ops++
	b.depth++
	b.max = max(b.max, b.depth)
	if b.depth > maxNesting {
		return b.err(i)
	}
	return nil
}

// resetOps ends the current chain (at ;, & or a newline).
func (b *bounds) resetOps() {
	b.letMode = false
	top := &b.stack[len(b.stack)-1]
	b.depth -= top.ops
	top.ops = 0
}

// close ends the innermost construct closed by closer, dropping keyword
// frames above it (an `if` that was only a word); it ignores a closer
// that a quote, expansion or case pattern list is in the way of.
func (b *bounds) close(closer string) {
	for n := len(b.stack) - 1; n > 0; n-- {
		f := b.stack[n]
		if f.closer == closer && f.kind != fIf && f.kind != fLoop && f.kind != fCase {
			for len(b.stack) > n {
				b.pop()
			}
			return
		}
		if f.kind != fIf && f.kind != fLoop {
			return
		}
	}
}

func (b *bounds) top() *bframe { return &b.stack[len(b.stack)-1] }

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// wordEnd reports a byte that ends an unquoted word.
func wordEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

func (b *bounds) scan() error {
	src := b.src
	if err := b.push(0, bframe{kind: fCmd}); err != nil {
		return err
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\n' {
			b.line++
			b.lineStart = i + 1
		}
		top := b.top()
		switch top.kind {
		case fRawHdoc, fHdoc:
			if i == b.lineStart || (i == 0) {
				// At the start of a body line: the delimiter ends it.
				end := i
				for end < len(src) && src[end] != '\n' {
					end++
				}
				l := src[i:end]
				if top.strip {
					for len(l) > 0 && l[0] == '\t' {
						l = l[1:]
					}
				}
				if l == top.delim {
					b.pop()
					i = end - 1
					continue
				}
				if top.kind == fRawHdoc {
					if end > i {
						i = end - 1 // the newline is read next
					}
					continue
				}
			}
			if top.kind == fRawHdoc {
				continue
			}
			switch c {
			case '\\':
				i = b.escape(i)
			case '$':
				var err error
				i, err = b.dollar(i)
				if err != nil {
					return err
				}
			case '`':
				if err := b.push(i, bframe{kind: fBacktick, closer: "`"}); err != nil {
					return err
				}
			}
			continue
		case fDbl:
			switch c {
			case '\\':
				i = b.escape(i)
			case '"':
				b.pop()
			case '$':
				var err error
				i, err = b.dollar(i)
				if err != nil {
					return err
				}
			case '`':
				if err := b.push(i, bframe{kind: fBacktick, closer: "`"}); err != nil {
					return err
				}
			}
			continue
		case fArith:
			switch c {
			case '\\':
				i = b.escape(i)
			case '(':
				if err := b.push(i, bframe{kind: fArith, closer: ")"}); err != nil {
					return err
				}
			case ')':
				if top.closer == "))" && i+1 < len(src) && src[i+1] == ')' {
					b.pop()
					i++
				} else if top.closer == ")" {
					b.pop()
				}
			case ']':
				if top.closer == "]" {
					b.pop()
				}
			case '"':
				if err := b.push(i, bframe{kind: fDbl, closer: `"`}); err != nil {
					return err
				}
			case '$':
				var err error
				i, err = b.dollar(i)
				if err != nil {
					return err
				}
			case '`':
				if err := b.push(i, bframe{kind: fBacktick, closer: "`"}); err != nil {
					return err
				}
			case '+', '-', '*', '/', '%', '<', '>', '=', '!', '?', ':', '~', '^', '&', '|', ',', '[':
				if err := b.op(i); err != nil {
					return err
				}
			}
			continue
		case fParam:
			switch c {
			case '\\':
				i = b.escape(i)
			case '}':
				b.pop()
			case '\'':
				// Quoted or not depends on the context; count what
				// is inside as nesting and let nothing close.
				j := i + 1
				for j < len(src) && src[j] != '\'' {
					if err := b.unsure(j); err != nil {
						return err
					}
					j++
				}
				i = j
			case '"':
				if err := b.push(i, bframe{kind: fDbl, closer: `"`}); err != nil {
					return err
				}
			case '$':
				var err error
				i, err = b.dollar(i)
				if err != nil {
					return err
				}
			case '`':
				if err := b.push(i, bframe{kind: fBacktick, closer: "`"}); err != nil {
					return err
				}
			case '[', '(', '{', '+', '-', '*', '/', '%', '<', '>', '=', '!', '?', ':', '~', '^', '&', '|', ',', '#', '@':
				if err := b.op(i); err != nil {
					return err
				}
			}
			continue
		}
		// Command context: top level, ( ), $( ), { }, ` `, keywords.
		var err error
		i, err = b.command(i)
		if err != nil {
			return err
		}
	}
	return nil
}

// unsure counts an opening byte inside text that may or may not be quoted.
func (b *bounds) unsure(j int) error {
	switch b.src[j] {
	case '(', '{', '[', '$', '`', '"':
		return b.op(j)
	case '\n':
		b.line++
		b.lineStart = j + 1
	}
	return nil
}

// escape skips a backslash and the byte it quotes.
func (b *bounds) escape(i int) int {
	if i+1 < len(b.src) {
		if b.src[i+1] == '\n' {
			b.line++
			b.lineStart = i + 2
		}
		return i + 1
	}
	return i
}

// dollar handles $( $(( ${ $[ and $' at i; it returns the last byte used.
func (b *bounds) dollar(i int) (int, error) {
	src := b.src
	if i+1 >= len(src) {
		return i, nil
	}
	switch src[i+1] {
	case '(':
		if i+2 < len(src) && src[i+2] == '(' {
			return i + 2, b.push(i, bframe{kind: fArith, closer: "))"})
		}
		return i + 1, b.push(i, bframe{kind: fCmd, closer: ")"})
	case '{':
		return i + 1, b.push(i, bframe{kind: fParam, closer: "}"})
	case '[':
		return i + 1, b.push(i, bframe{kind: fArith, closer: "]"})
	case '\'':
		if b.top().kind == fDbl || b.top().kind == fHdoc {
			return i, nil // $' is literal inside double quotes
		}
		j := i + 2
		for j < len(src) && src[j] != '\'' {
			if src[j] == '\\' {
				j++
			}
			if j < len(src) && src[j] == '\n' {
				b.line++
				b.lineStart = j + 1
			}
			j++
		}
		return j, nil
	}
	return i, nil
}

// keywords open compound commands; their closers end them.
var keywords = map[string]frameKind{
	"if": fIf, "while": fLoop, "until": fLoop, "for": fLoop, "select": fLoop, "case": fCase,
}

// command handles byte i in a command context.
func (b *bounds) command(i int) (int, error) {
	src := b.src
	c := src[i]
	top := b.top()
	switch c {
	case '\n':
		b.resetOps()
		if len(b.pending) > 0 {
			// Here-document bodies start on the next line, the first
			// one first.
			for n := len(b.pending) - 1; n >= 0; n-- {
				if err := b.push(i, b.pending[n]); err != nil {
					return i, err
				}
			}
			b.pending = b.pending[:0]
		}
	case ';':
		b.resetOps()
		if i+1 < len(src) && src[i+1] == ';' {
			i++
		}
	case '&':
		if i+1 < len(src) && src[i+1] == '&' {
			return i + 1, b.op(i)
		}
		if i+1 < len(src) && src[i+1] == '>' {
			return i, nil
		}
		if i > 0 && (src[i-1] == '>' || src[i-1] == '<') {
			return i, nil // >&2
		}
		b.resetOps()
	case '|':
		if i+1 < len(src) && (src[i+1] == '|' || src[i+1] == '&') {
			i++
		}
		return i, b.op(i)
	case '!':
		return i, b.op(i)
	case '\\':
		return b.escape(i), nil
	case '\'':
		j := i + 1
		for j < len(src) && src[j] != '\'' {
			if src[j] == '\n' {
				b.line++
				b.lineStart = j + 1
			}
			j++
		}
		return j, nil
	case '"':
		return i, b.push(i, bframe{kind: fDbl, closer: `"`})
	case '`':
		if top.kind == fBacktick {
			b.pop()
			return i, nil
		}
		return i, b.push(i, bframe{kind: fBacktick, closer: "`"})
	case '$':
		return b.dollar(i)
	case '#':
		if i == 0 || isBlank(src[i-1]) {
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		}
	case '(':
		if i+1 < len(src) && src[i+1] == '(' {
			return i + 1, b.push(i, bframe{kind: fArith, closer: "))"})
		}
		return i, b.push(i, bframe{kind: fCmd, closer: ")"})
	case ')':
		if top.kind == fCase {
			return i, nil // the end of a pattern list
		}
		b.close(")")
	case '{':
		return i, b.push(i, bframe{kind: fCmd, closer: "}"})
	case '}':
		b.close("}")
	case '[':
		// An array subscript is arithmetic (a[1+2]=x); a glob
		// bracket only makes the rest of the word count more.
		b.wordArith = true
		return i, b.op(i)
	case '<':
		if i+2 < len(src) && src[i+1] == '<' && src[i+2] != '<' {
			return b.heredoc(i)
		}
		if i+2 < len(src) && src[i+1] == '<' && src[i+2] == '<' {
			return i + 2, nil
		}
		if i+1 < len(src) && src[i+1] == '(' {
			return i + 1, b.push(i, bframe{kind: fCmd, closer: ")"})
		}
	case '>':
		if i+1 < len(src) && src[i+1] == '(' {
			return i + 1, b.push(i, bframe{kind: fCmd, closer: ")"})
		}
	default:
		if i == 0 || wordEnd(src[i-1]) {
			// A word starts: keywords open and close compound
			// commands, and let's words are arithmetic.
			j := i
			for j < len(src) && !wordEnd(src[j]) && j-i < 8 {
				j++
			}
			word := src[i:j]
			if j < len(src) && !wordEnd(src[j]) {
				word = ""
			}
			b.wordArith = b.letMode
			if k, ok := keywords[word]; ok {
				return j - 1, b.push(i, bframe{kind: k})
			}
			switch word {
			case "fi":
				if top.kind == fIf {
					b.pop()
				}
			case "done":
				if top.kind == fLoop {
					b.pop()
				}
			case "esac":
				if top.kind == fCase {
					b.pop()
				}
			case "let":
				b.letMode = true
			}
		}
		if b.wordArith && strings.IndexByte("+-*/%=?:~^,", c) >= 0 {
			return i, b.op(i)
		}
	}
	return i, nil
}

// heredoc reads the operator and delimiter of a here-document at i and
// queues its body.
func (b *bounds) heredoc(i int) (int, error) {
	src := b.src
	j := i + 2
	f := bframe{kind: fHdoc}
	if j < len(src) && src[j] == '-' {
		f.strip = true
		j++
	}
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	var delim []byte
	for j < len(src) && !wordEnd(src[j]) {
		switch c := src[j]; c {
		case '\'', '"':
			f.kind = fRawHdoc
			k := j + 1
			for k < len(src) && src[k] != c {
				delim = append(delim, src[k])
				k++
			}
			j = k
		case '\\':
			f.kind = fRawHdoc
			if j+1 < len(src) {
				j++
				delim = append(delim, src[j])
			}
		case '$', '`':
			// An expanded delimiter: the body is read as data by
			// nobody we can predict. Treat the rest as unquoted.
			delim = append(delim, c)
		default:
			delim = append(delim, c)
		}
		j++
	}
	f.delim = string(delim)
	if f.delim == "" {
		return i + 1, nil
	}
	b.pending = append(b.pending, f)
	return j - 1, nil
}
