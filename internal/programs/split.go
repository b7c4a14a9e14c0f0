package programs

import "strings"

// Arg is one argument as the tokenizer sees it.
type Arg struct {
	Text   string
	Static bool // the value is known; otherwise Text is the word as written
}

// TokKind classifies a token.
type TokKind int

const (
	// Operand is a positional argument.
	Operand TokKind = iota
	// Option is one option (one letter of a short cluster).
	Option
	// Unknown is an argument not known statically.
	Unknown
	// EndOfOptions is "--".
	EndOfOptions
)

// Token is one operand or option of a command.
type Token struct {
	Kind TokKind
	// Arg is the index of the argument the token starts in.
	Arg int
	// Name is an option's name without dashes ("f", "force", "name").
	Name string
	// Long is set for a long option (or any option of a single-dash
	// program).
	Long bool
	// Opt is what the table knows about the option, or nil.
	Opt *Opt
	// Value is the option's value: attached (ValueArg -1) or the next
	// argument (ValueArg its index). A value read from the next word of an
	// option the built-in table does not vouch for (Peeked) is also still
	// read as an argument of its own.
	Value       string
	HasValue    bool
	ValueStatic bool
	ValueArg    int
	Peeked      bool
	// AfterEnd marks an operand or unknown word after "--".
	AfterEnd bool
}

// Split reads a command's arguments (after the program, and after the
// subcommand words' program options) with the block's knowledge: which
// options take a value, which words are operands.
func (b *Block) Split(args []Arg) []Token {
	return b.AppendSplit(make([]Token, 0, len(args)), args)
}

// AppendSplit is Split appending to dst, for callers that keep a buffer.
func (b *Block) AppendSplit(dst []Token, args []Arg) []Token {
	out := dst
	var single, bundled bool
	if b != nil {
		single = b.prog.SingleDash != nil
		bundled = b.prog.Bundled != nil
	}
	end := false
	value := func(tok *Token, o *Opt, i int) int {
		if o == nil || o.Takes != Required || i+1 >= len(args) {
			return i
		}
		tok.Value, tok.HasValue, tok.ValueStatic, tok.ValueArg = args[i+1].Text, true, args[i+1].Static, i+1
		if o.Consumes {
			return i + 1
		}
		tok.Peeked = true
		return i
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			out = append(out, Token{Kind: Unknown, Arg: i, AfterEnd: end})
			continue
		}
		t := a.Text
		if i == 0 && bundled && !end && t != "" && t[0] != '-' && clusterLike(t) {
			t = "-" + t
		}
		switch {
		case end || len(t) < 2 || t[0] != '-':
			out = append(out, Token{Kind: Operand, Arg: i, AfterEnd: end})
		case t == "--":
			end = true
			out = append(out, Token{Kind: EndOfOptions, Arg: i})
		case strings.HasPrefix(t, "--") || single:
			name, val, has := strings.Cut(strings.TrimLeft(t, "-"), "=")
			tok := Token{Kind: Option, Arg: i, Name: name, Long: true}
			if b != nil {
				tok.Opt = b.Long(name)
				if tok.Opt == nil {
					tok.Opt = b.Abbrev(name)
				}
			}
			if has {
				tok.Value, tok.HasValue, tok.ValueStatic, tok.ValueArg = val, true, true, -1
				out = append(out, tok)
				continue
			}
			i = value(&tok, tok.Opt, i)
			out = append(out, tok)
		default:
			for j := 1; j < len(t); j++ {
				tok := Token{Kind: Option, Arg: i, Name: t[j : j+1]}
				if b != nil {
					tok.Opt = b.Short(t[j])
				}
				o := tok.Opt
				if o == nil || o.Takes == NoValue {
					out = append(out, tok)
					continue
				}
				if rest := t[j+1:]; rest != "" {
					tok.Value, tok.HasValue, tok.ValueStatic, tok.ValueArg = rest, true, true, -1
					out = append(out, tok)
					if o.Consumes || o.Takes == Attached && b.trusted(o) {
						break // the rest of the cluster is the value
					}
					continue // read the rest as flags too: stricter
				}
				i = value(&tok, o, i)
				out = append(out, tok)
				break
			}
		}
	}
	return out
}

// trusted reports whether every fact naming o is built in.
func (b *Block) trusted(o *Opt) bool { return o.Builtin }

// clusterLike reports whether a word reads as a cluster of option letters
// (tar's first word: xzf, tvf).
func clusterLike(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// Resolve finds the block a command's words belong to: the program (see
// Name), its options before the subcommand (which it skips, returning
// them as globals), and the subcommand words the table has blocks for.
// args are the words after the program; rest are those after the
// subcommand's program options (the subcommand words themselves included,
// as operands). b is nil for a program the table does not know.
func (t *Table) Resolve(prog string, args []Arg) (name string, b *Block, rest []Arg) {
	name = Name(prog)
	if sub, ok := strings.CutPrefix(name, "git-"); ok && sub != "" {
		name = "git"
		args = append([]Arg{{Text: sub, Static: true}}, args...)
	}
	p := t.Program(name)
	if p == nil {
		return name, nil, args
	}
	i := 0
	for p.HasGlobals() && i < len(args) && args[i].Static {
		v, ok, _ := p.Global(args[i].Text)
		if !ok {
			break
		}
		i++
		if v {
			i++
		}
	}
	if i > len(args) {
		i = len(args)
	}
	rest = args[i:]
	return name, p.Deepest(len(rest), func(j int) (string, bool) { return rest[j].Text, rest[j].Static }), rest
}

// Deepest returns the block of the longest run of subcommand words (at
// most three) that starts n words: word(j) is the j-th word and whether it
// is known statically. A flag or a word not known ends the run; with no
// subcommand block it is the program's root block.
func (p *Program) Deepest(n int, word func(j int) (text string, static bool)) *Block {
	b, sub := p.Root, ""
	for j := 0; j < n && j < 3; j++ {
		s, static := word(j)
		if !static || strings.HasPrefix(s, "-") {
			break
		}
		if sub != "" {
			s = sub + " " + s
		}
		nb := p.Sub(s)
		if nb == nil {
			break
		}
		b, sub = nb, s
	}
	return b
}
