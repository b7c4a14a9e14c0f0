package manifest

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/internal/programs"
)

// The regex fragments below match shell text. None of them can reach past a
// blank into another word except sep, and no word fragment matches a shell
// operator (; & | < > ( )), an unquoted or double-quoted $ or backquote, a
// newline or another control character. A grant built from them therefore
// matches one simple command of literal words, never a chained tail such as
// "; rm -rf /", a command substitution or a redirection.
//
// The fragments spell characters as classes of printable ASCII (space to
// "~", see printable): positive classes are a third the length of the
// negated ones with control-character ranges, and grants repeat them many
// times. A word with a byte outside printable ASCII is therefore not
// matched (the agent asks), which only makes a grant stricter.
var (
	// metachars are the characters that do not mean themselves outside
	// quotes (and the blank).
	metachars = " ;&|<>()$`\\\"'"
	// unquoted is one character that means itself outside quotes.
	unquoted = printable(metachars)
	escaped  = `\\` + printable("")
	sglQuote = `'` + printable("'") + `*'`
	// dblQuote is a double-quoted string without backslashes: an escape
	// inside one is rare in commands and costs the length of every grant.
	dblQuote = `"` + printable("\"\\$`") + `*"`
	piece    = `(?:` + unquoted + `|` + escaped + `|` + sglQuote + `|` + dblQuote + `)`
	// word is one shell word of literal text.
	word = piece + `+`
	// nonOption is the first piece of a word whose first character after
	// quote removal is not "-", so no program reads it as an option.
	nonOption = nonOptionExcept("-")
)

// nonOptionExcept is the first piece of a word whose first character after
// quote removal is none of first; any pieces may follow it. An empty quoted
// prefix (”-i) or a leading backslash (\-i) does not start one: stricter
// and shorter.
func nonOptionExcept(first string) string {
	return printable(metachars+first) +
		`|'` + printable("'"+first) + printable("'") + `*'` +
		`|"` + printable("\"\\$`"+first) + printable("\"\\$`") + `*"`
}

// printable returns a character class of the printable ASCII characters
// (space to "~") except those in except, as ranges.
//
// Grants repeat these classes many times and config.json doubles every
// backslash, so they are spelled with as few escapes as RE2 allows: "[" needs
// none (only "[:" starts a POSIX class, and ":" sorts before "["), and a
// range starting with "]" goes first in the class, where "]" is literal.
func printable(except string) string {
	esc := func(c byte) string {
		if strings.IndexByte(`\]-^`, c) >= 0 {
			return `\` + string(c)
		}
		return string(c)
	}
	var first string
	var b strings.Builder
	for c := byte(' '); c <= '~'; c++ {
		if strings.IndexByte(except, c) >= 0 {
			continue
		}
		end := c
		for end < '~' && strings.IndexByte(except, end+1) < 0 {
			end++
		}
		var r string
		switch end - c {
		case 0:
			r = esc(c)
		case 1:
			r = esc(c) + esc(end)
		default:
			r = esc(c) + "-" + esc(end)
		}
		if c == ']' {
			first = r[1:]
		} else {
			b.WriteString(r)
		}
		c = end
	}
	return "[" + first + b.String() + "]"
}

const (
	sep = `[ \t]+`
	// pathPrefix is a directory prefix of a program, as in /usr/bin/git or
	// ./.jiri_root/bin/jiri.
	pathPrefix = `(?:[\w.+@%,:~/-]*/)?`
	trailer    = `[ \t]*$`
)

// An allow grant accepts any variable assignments in front of the command
// (FOO=bar git status, ENV_VAR=1 fx -t dev test), as Fuchsia's grants do,
// except of the variables that change what runs: those of every program
// (programs.RunEnv: PATH, LD_*, BASH_ENV, HOME, XDG_*, …) and those the
// program table names for the program (env-runs: GIT_*, GOFLAGS,
// PYTHONPATH, …; env-exec: GIT_PAGER, LESSOPEN). A name that is a proper
// prefix of a forbidden one (GI, LD) is not accepted either: it costs a
// third of the pattern to tell apart, and such names are rare. The shim's
// own engine accepts the same names and more (TestEnvShimSafe), so a grant
// never allows an assignment the shim would refuse.

// knowledge is what grants read from the program table, the same table the
// matcher decides with (package programs).
type knowledge struct {
	// options lists, per program or "git <subcommand>", the options that
	// make an otherwise harmless command run a program or write files.
	// Words after a rule's own words may not be one of them (long
	// options by any abbreviation, short ones inside any bundle).
	options map[string]optionRule
	// help are the tools that get "<tool> help …" and "<tool> … --help"
	// from a line "<tool> help".
	help map[string]bool
	// gitConfigKey is a key git -c may set in an allow grant: a key
	// without a section (which git refuses) or one the table calls safe
	// (config-safe): it changes only how git formats output or records
	// work, never what it runs.
	gitConfigKey string
	// envRuns are, per program, the variables the table says change
	// what it runs (env-runs, env-exec), for the names an allow grant
	// accepts in front of it.
	envRuns map[string][]string
}

// envName returns the regex for a variable name an allow grant accepts in
// front of prog: not one that changes what runs (see above), not starting
// with a digit.
func (k *knowledge) envName(prog string) string {
	words, prefixes := programs.RunEnv()
	prefixes = append(prefixes, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	for _, n := range k.envRuns[prog] {
		if stem, ok := strings.CutSuffix(n, "*"); ok {
			prefixes = append(prefixes, stem)
		} else if !strings.Contains(n, "*") {
			words = append(words, n)
		} else {
			// CARGO_TARGET_*_RUNNER: its fixed start.
			stem, _, _ := strings.Cut(n, "*")
			prefixes = append(prefixes, stem)
		}
	}
	d, _ := complementParts("", words, prefixes)
	return strings.Replace(d, `0123456789`, `0-9`, 1) + `\w*`
}

func newKnowledge(tbl *programs.Table) *knowledge {
	k := &knowledge{options: map[string]optionRule{}, help: map[string]bool{}, envRuns: map[string][]string{}}
	var safe []string
	for _, f := range tbl.Facts() {
		prog := f.Program()
		p := tbl.Program(prog)
		key := prog
		if prog == "git" && f.Key != "git" {
			key = f.Key
		}
		switch f.Kind {
		case programs.Help:
			k.help[prog] = true
			continue
		case programs.ConfigSafe:
			safe = append(safe, f.Args...)
			continue
		case programs.EnvExec, programs.EnvRuns, programs.EnvArgs:
			k.envRuns[prog] = append(k.envRuns[prog], f.Args...)
			continue
		case programs.Exec, programs.Runs, programs.Ask, programs.Write, programs.Writes, programs.Inline, programs.Downloads, programs.Ex, programs.Code:
		default:
			// Output options (go build -o bin/x) write where the
			// agent works; the shim's engine asks when the path
			// leaves the working directory. Spelling that in a grant
			// would not fit.
			continue
		}
		r := k.options[key]
		r.stem = prog == "git"
		for _, a := range f.Args {
			opt, _, _ := strings.Cut(a, "@")
			switch {
			case opt == "+!" || opt == "+|" || opt == "+":
				r.plus = true
			case !strings.HasPrefix(opt, "-"):
				// an operand shape (dd of=): not an option
			case p.SingleDash != nil:
				r.words = appendNew(r.words, strings.TrimLeft(opt, "-"))
			case strings.HasPrefix(opt, "--"):
				r.long = appendNew(r.long, opt[2:])
			case len(opt) == 2:
				if !strings.Contains(r.short, opt[1:]) {
					r.short += opt[1:]
				}
			default:
				r.words = appendNew(r.words, opt[1:]) // zip -TT
			}
		}
		k.options[key] = r
	}
	// find -exec and friends run a command; package shellparse unwraps
	// them, so the table has no fact for them.
	f := k.options["find"]
	for _, w := range []string{"exec", "execdir", "ok", "okdir"} {
		f.words = appendNew(f.words, w)
	}
	k.options["find"] = f
	k.gitConfigKey = `(?:[\w-]+|(?i:` + factor(safe) + `))`
	return k
}

// factor returns a regex for the alternation of the config keys keys,
// with common prefixes spelled once (core\.(?:abbrev|eol)) and a trailing
// "*" meaning one or more key characters.
func factor(keys []string) string {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	// Whole sections (color.*) share one alternative.
	var alts, whole []string
	keys = slices.DeleteFunc(keys, func(k string) bool {
		sec, ok := strings.CutSuffix(k, ".*")
		if ok && !strings.ContainsAny(sec, ".*") {
			whole = append(whole, regexp.QuoteMeta(sec))
		}
		return ok && !strings.ContainsAny(sec, ".*")
	})
	if len(whole) > 0 {
		alts = append(alts, `(?:`+strings.Join(whole, "|")+`)\.[\w.-]+`)
	}
	for len(keys) > 0 {
		// The keys sharing the first one's section (up to and with ".").
		sec, _, ok := strings.Cut(keys[0], ".")
		n := 1
		for ok && n < len(keys) && strings.HasPrefix(keys[n], sec+".") {
			n++
		}
		if !ok || n == 1 || strings.HasSuffix(keys[0], ".*") {
			for _, k := range keys[:n] {
				alts = append(alts, keyRegex(k))
			}
		} else {
			var rest []string
			for _, k := range keys[:n] {
				rest = append(rest, keyRegex(k[len(sec)+1:]))
			}
			alts = append(alts, regexp.QuoteMeta(sec)+`\.(?:`+strings.Join(rest, "|")+`)`)
		}
		keys = keys[n:]
	}
	return strings.Join(alts, "|")
}

func keyRegex(k string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(k), `\*`, `[\w.-]+`)
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

type optionRule struct {
	short string   // forbidden short option letters
	long  []string // forbidden long options, without "--"
	words []string // forbidden options spelled -name or --name
	plus  bool     // no word may start with + (less +!cmd)
	// stem forbids every long option starting with the first stemLen
	// letters of a forbidden one, not only its abbreviations: git's
	// grants carry git's global options and must stay short.
	stem bool
}

const stemLen = 3

// longStemLen is where every program's forbidden long options become
// stems: --node-options forbids --node-* (its abbreviations up to --node
// were forbidden already). Stricter by a little, and each forbidden option
// costs at most five trie levels in every grant.
const longStemLen = 5

// style holds the regex fragments of one kind of grant: allow-safe grants
// (Grants) or broad deny grants (DenyGrants).
type style struct {
	k                  *knowledge
	deny               bool
	sep, piece, word   string
	start              string // from ^ to the program's name
	git, fx, ffx, jiri string // from ^ to after the tool's global flags
	argWords           map[string]string
	// starts are start for the programs whose own variables an allow
	// grant may not set (envRuns).
	starts map[string]string
}

// startFor is start for the program prog.
func (st *style) startFor(prog string) string {
	if s, ok := st.starts[prog]; ok {
		return s
	}
	return st.start
}

// Expander expands rules into grants with what a program table knows: the
// built-in one (Grants, DenyGrants) or one with a checkout's own facts
// (NewExpander). It is safe for concurrent use.
type Expander struct {
	allow, deny style
	home        string
}

// WithHome returns an expander whose deny grants for a rule about ~ also
// match the home directory spelled out, and a rule about ~ itself (or ~/*)
// its parents and /root: rm -rf ~ also denies rm -rf /home/me and
// rm -rf /home. dir must be absolute.
func (e *Expander) WithHome(dir string) *Expander {
	out := *e
	if strings.HasPrefix(dir, "/") {
		out.home = path.Clean(dir)
	}
	return &out
}

// homeSpellings returns the rule's words with each word about ~ spelled
// out: the home directory, and for ~ itself its parents (not /) and /root.
func homeSpellings(words []string, home string) [][]string {
	var out [][]string
	for i, w := range words {
		if i == 0 || w != "~" && w != "~/*" && !strings.HasPrefix(w, "~/") {
			continue
		}
		var alts []string
		if home != "" {
			alts = append(alts, home+strings.TrimPrefix(w, "~"))
		}
		if w == "~" || w == "~/*" {
			for d := path.Dir(home); home != "" && d != "/"; d = path.Dir(d) {
				alts = append(alts, d)
			}
			if home != "/root" {
				alts = append(alts, "/root")
			}
		}
		for _, a := range alts {
			spellings := []string{a}
			if w == "~" {
				spellings = append(spellings, a+"/") // matches a//… too
			}
			for _, sp := range spellings {
				alt := slices.Clone(words)
				alt[i] = sp
				out = append(out, alt)
			}
		}
	}
	return out
}

// GrantsVersion changes whenever the grants agents-setup writes for a line
// are spelled differently (or, as in 3, a list takes other grants), so
// that agents-setup rewrites what an older version wrote
// (TestGrantsVersion fails until it is bumped).
const GrantsVersion = 7

// NewExpander returns an expander for a program table, such as the
// built-in one merged with an overlay's .agents/config/programs.txt. For
// the built-in table it is the one the package functions use, made once.
func NewExpander(tbl *programs.Table) *Expander {
	if tbl == programs.Builtin() {
		return builtinExpander()
	}
	return newExpander(tbl)
}

func newExpander(tbl *programs.Table) *Expander {
	k := newKnowledge(tbl)
	return &Expander{allow: newStyle(k, false), deny: newStyle(k, true)}
}

var builtinExpander = sync.OnceValue(func() *Expander { return newExpander(programs.Builtin()) })

func newStyle(k *knowledge, deny bool) style {
	st := style{k: k, deny: deny, sep: sep, piece: piece, word: word}
	var key, extraGitFlags, path string
	if deny {
		// Anything the shell could read as one word, quotes spanning lines.
		st.sep = `\s+`
		st.piece = `(?:[^\s"']|"(?:[^"\\]|\\[\s\S])*"|'[^']*')`
		st.word = st.piece + `+`
		env := `[A-Za-z_][A-Za-z0-9_]*=` + st.piece + `*` + st.sep
		key = `\S+`
		extraGitFlags = `|(?:--exec-path|--config-env|--attr-source|--super-prefix|--list-cmds)(?:=` + st.word + `)?|-\S+`
		path = `(?:\S*/)?`
		// Runners in front of the program and a quoted or escaped name.
		runner := path + `(?:sudo|doas|command|builtin|exec|nohup|time|nice|env|stdbuf|setsid|ionice|timeout)(?:` + st.sep + `(?:-\S+|[0-9][0-9.]*[smhd]?))*` + st.sep
		st.start = `^\s*(?:` + env + `|` + runner + `)*` + path + `(?:\\|'|")?`
	} else {
		env := func(prog string) string { return `(?:` + k.envName(prog) + `=` + piece + `*` + sep + `)*` }
		key = k.gitConfigKey
		path = pathPrefix
		st.start = `^[ \t]*` + env("") + path
		st.starts = map[string]string{}
		for prog := range k.envRuns {
			st.starts[prog] = `^[ \t]*` + env(prog) + path
		}
	}
	name := func(n string) string {
		if deny {
			return n + `(?:'|")?`
		}
		return n
	}
	val := func(flags string) string { return `(?:` + flags + `)(?:=|` + st.sep + `)` + st.word }
	gitFlags := `(?:` + st.sep + `(?:` + val(`-C|--(?:git-dir|work-tree|namespace)`) +
		`|-c` + st.sep + key + `(?:=` + st.piece + `*)?` +
		`|--(?:no-(?:pager|replace-objects|optional-locks|advice|lazy-fetch)|paginate|bare|(?:literal|glob|noglob|icase)-pathspecs)|-[pP]` +
		extraGitFlags + `))*`
	fxFlags := `(?:` + st.sep + `(?:` + val(`-t|--(?:target|dir|enable|disable|invoker)`) + `|-[xi-]|-xx))*`
	ffxFlags := `(?:` + st.sep + `(?:` + val(`-[tcelo]|--(?:target|machine|config|env(?:-root)?|isolate-dir|stamp|timeout|log-(?:level|output))`) +
		`|-[vd]|--(?:schema|verbose|no-environment|strict|direct)))*`
	jiriFlags := `(?:` + st.sep + `(?:` + val(`--?(?:j|color|progress-window|root|time-log-threshold|timefile)`) +
		`|--?show-progress(?:=` + st.word + `)?|-q|--?(?:quiet|time|vv?)))*`
	st.git = st.startFor("git") + name(`git`) + gitFlags
	st.fx = st.startFor("fx") + name(`fx`) + fxFlags
	st.ffx = st.startFor("ffx") + `(?:fx` + fxFlags + st.sep + path + `)?` + name(`ffx`) + ffxFlags
	st.jiri = st.startFor("jiri") + name(`jiri`) + jiriFlags
	st.argWords = map[string]string{}
	if !deny {
		for name, r := range k.options {
			st.argWords[name] = r.word()
		}
	}
	return st
}

// rest matches what may follow a rule's own words, to the end of the
// command: for allow grants further literal words (not a forbidden option of
// the program or git subcommand key), for deny grants anything after a
// character that ends a word.
func (st *style) rest(key string) string {
	if st.deny {
		return `(?:[\s;&|<>()\x60#$"'\\][\s\S]*)?$`
	}
	return `(?:` + sep + st.argWord(key) + `)*` + trailer
}

// gap matches words between a rule's words where flags may come anywhere.
func (st *style) gap(key string) string {
	if st.deny {
		return `(?:` + st.sep + st.word + `)*`
	}
	return `(?:` + sep + st.argWord(key) + `)*`
}

// argWord is the regex for a further argument of the program or git
// subcommand named key.
func (st *style) argWord(key string) string {
	if w, ok := st.argWords[key]; ok {
		return w
	}
	return st.word
}

// word returns the regex for one argument word that is not a forbidden option.
//
// An option's name is decided by its first characters: once a name has left
// the trie of forbidden names (complementParts' d, a literal character no
// forbidden name continues with), no quoting, value or further character
// after it makes it a forbidden one. Such an option and a word that is no
// option at all therefore share one tail of any pieces.
func (r optionRule) word() string {
	starts := nonOption
	if r.plus {
		// No word starting with +.
		starts = nonOptionExcept("-+")
	}
	if len(r.words) > 0 {
		// Options spelled -name are not abbreviated; a long one
		// forbids its stem (-toolexec: -toole*), shorter to spell.
		var words, stems []string
		for _, w := range r.words {
			if len(w) > longStemLen {
				stems = append(stems, w[:longStemLen])
			} else {
				words = append(words, w)
			}
		}
		// A name that ends inside the trie (-e, not -exec) is itself and
		// takes only a value.
		d, e := complementParts(".-", words, stems)
		ends := `--?`
		if e != "" {
			starts += `|--?(?:` + e + `)=`
			ends += `(?:` + e + `)?`
		}
		return `(?:(?:` + starts + `|--?` + d + `)` + piece + `*|` + ends + `)`
	}
	// A short option bundle: unquoted letters and value characters, none a
	// forbidden letter.
	shortOK := `[^\W` + r.short + `]`
	shortRest := `(?:[^\W` + r.short + `]|[.,:/+=@%^~-])`
	if r.short == "" {
		shortOK, shortRest = `\w`, `[\w.,:/+=@%^~-]`
	}
	short := `-` + shortOK + shortRest + `*`
	if len(r.long) == 0 {
		// No forbidden long option: "--" and anything after it.
		return `(?:(?:` + starts + `|--)` + piece + `*|` + short + `)`
	}
	var words, stems []string
	for _, l := range r.long {
		for i := 1; i <= len(l); i++ {
			if r.stem && i == stemLen || i == longStemLen {
				// Anything starting with the stem: stricter, and
				// shorter to spell.
				stems = append(stems, l[:i])
				break
			}
			words = append(words, l[:i])
		}
	}
	// Every prefix of a forbidden long option is forbidden (an
	// abbreviation), so no allowed name ends inside the trie.
	d, e := complementParts("-", words, stems)
	if e != "" {
		panic("manifest: a long option's prefix is allowed")
	}
	return `(?:(?:` + starts + `|--` + d + `)` + piece + `*|--|` + short + `)`
}

var parsers = sync.Pool{New: func() any { return newLineParser() }}

// Grants expands one rule into command(regex:…) grants. A rule shaped
// name(…) is a grant already and is returned unchanged; a blank or comment
// line yields none. Each regex is anchored and matches the whole command
// text: the rule's words (quoted as needed) after optional env assignments, a
// directory prefix of the program and the program's global flags, followed by
// any further literal words. The result is deterministic and has no
// duplicates.
func Grants(line string) ([]string, error) {
	return builtinExpander().grants(line, false)
}

// Grants is the package function with the expander's program table.
func (e *Expander) Grants(line string) ([]string, error) {
	return e.grants(line, false)
}

// DenyGrants is the package function with the expander's program table.
func (e *Expander) DenyGrants(line string) ([]string, error) {
	return e.grants(line, true)
}

// DenyGrants expands one rule like Grants, but for the deny list: the
// grants also match the rule's command with anything after it ("git push
// --force; echo done"), behind runners such as sudo, env or command, with any
// env assignment, any git -c key, a quoted program name or quoted words, so
// the agent denies more, never less. Never put these grants in an allow list.
func DenyGrants(line string) ([]string, error) {
	return builtinExpander().grants(line, true)
}

func (e *Expander) grants(line string, deny bool) ([]string, error) {
	s := strings.TrimSpace(line)
	if s == "" || s[0] == '#' {
		return nil, nil
	}
	if g, ok, err := grantLine(s); ok || err != nil {
		if err != nil {
			return nil, fmt.Errorf("rule %q: %w", s, err)
		}
		return []string{g}, nil
	}
	p := parsers.Get().(*lineParser)
	words, _, err := p.words(s)
	parsers.Put(p)
	if err != nil {
		return nil, fmt.Errorf("rule %q: %w", s, err)
	}
	if len(words) == 0 {
		return nil, nil
	}
	if strings.ContainsAny(line, "\x00\n") {
		return nil, fmt.Errorf("rule %q: control character", s)
	}
	if words[0] == "" {
		return nil, fmt.Errorf("rule %q: empty command name", s)
	}
	st := &e.allow
	if deny {
		st = &e.deny
	}
	res := st.expand(words)
	if deny {
		for _, alt := range homeSpellings(words, e.home) {
			res = append(res, st.expand(alt)...)
		}
	}
	out := res[:0]
	for i, g := range res {
		if !slices.Contains(res[:i], g) {
			out = append(out, g)
		}
	}
	return out, nil
}

// grant builds one command(regex:…) grant.
type grant struct{ strings.Builder }

func newGrant(prefix string) *grant {
	g := &grant{}
	g.Grow(len("command(regex:") + len(prefix) + 1024)
	g.WriteString("command(regex:")
	g.WriteString(prefix)
	return g
}

// add appends regex fragments.
func (g *grant) add(parts ...string) *grant {
	for _, p := range parts {
		g.WriteString(p)
	}
	return g
}

func (g *grant) done() string {
	g.WriteString(")")
	return g.String()
}

func (st *style) expand(words []string) []string {
	prog, args := words[0], words[1:]
	base := path.Base(prog)
	if base == "." || base == "/" {
		base = prog
	}
	prefix := ""
	switch base {
	case "git":
		prefix = st.git
	case "fx":
		prefix = st.fx
	case "ffx":
		prefix = st.ffx
	case "jiri":
		prefix = st.jiri
	default:
		prefix = st.startFor(base) + regexp.QuoteMeta(base)
		if st.deny {
			prefix += `(?:'|")?`
		}
	}
	sep, word, piece := st.sep, st.word, st.piece
	if st.k.help[base] && len(args) == 1 && (args[0] == "help" || args[0] == "--help") {
		// The words after help or --help are the rest's.
		return []string{newGrant(prefix).add(`(?:`, sep, `help|(?:`, sep, word, `)*`, sep, `--help)`, st.rest("")).done()}
	}
	if base == "git" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub := args[0]
		key := "git " + sub
		if sub == "clean" && gitCleanForce(args[1:]) {
			return []string{newGrant(prefix).add(sep, st.spell("clean", false), `(?:`, sep, word, `)*`, sep,
				`(?:-[A-Za-z]*f[A-Za-z]*|--force(?:=`, piece, `*)?)`, st.rest("")).done()}
		}
		if flags := args[1:]; len(flags) > 0 && allFlags(flags) {
			var res []string
			gap := st.gap(key)
			for _, perm := range permutations(flags) {
				g := newGrant(prefix).add(sep, st.spell(sub, false))
				for _, f := range perm {
					g.add(gap, sep, st.flagPattern(f))
				}
				res = append(res, g.add(st.rest(key)).done())
			}
			return res
		}
	}
	if base == "sed" && sedInPlace(args) {
		long := `--i(?:n(?:-(?:p(?:l(?:a(?:c(?:e)?)?)?)?)?)?)?`
		return []string{newGrant(prefix).add(`(?:`, sep, word, `)*`, sep,
			`(?:-[A-Za-z]*i`, piece, `*|`, long, `(?:=`, piece, `*)?)`, st.rest("")).done()}
	}
	g := newGrant(prefix)
	for i, a := range args {
		g.add(sep, st.spell(a, i == len(args)-1))
	}
	key := base
	if base == "git" && len(args) > 0 {
		key = "git " + args[0]
	}
	return []string{g.add(st.rest(key)).done()}
}

// spell returns a regex matching the shell spellings of the literal word w:
// bare when that needs no quotes, else single- or double-quoted. As the last
// word of a rule, a trailing "/" also matches "//" and a trailing "~" also
// matches "~/", so "rm -rf /" covers "rm -rf //" but not "rm -rf /var".
func (st *style) spell(w string, last bool) string {
	bare := w != "" && !strings.ContainsAny(w, " \t\n;&|<>()$`\\\"'") && w[0] != '#' && !hasControl(w)
	if bare {
		if st.deny && !(last && strings.HasSuffix(w, "/")) {
			// Quoting a word does not change it: 'push' is push.
			q := regexp.QuoteMeta(w)
			if last && strings.HasSuffix(w, "~") {
				return `(?:` + q + `/*|'` + q + `'|"` + q + `")`
			}
			return `(?:` + q + `|'` + q + `'|"` + q + `")`
		}
		if last && strings.HasSuffix(w, "/") {
			return regexp.QuoteMeta(strings.TrimRight(w, "/")) + `/+`
		}
		if last && strings.HasSuffix(w, "~") {
			return regexp.QuoteMeta(w) + `/*`
		}
		return regexp.QuoteMeta(w)
	}
	var alts []string
	if !strings.Contains(w, "'") {
		alts = append(alts, regexp.QuoteMeta("'"+w+"'"))
	}
	var dq strings.Builder
	dq.WriteByte('"')
	for _, c := range []byte(w) {
		if strings.IndexByte("\"$`\\", c) >= 0 {
			dq.WriteByte('\\')
		}
		dq.WriteByte(c)
	}
	dq.WriteByte('"')
	alts = append(alts, regexp.QuoteMeta(dq.String()))
	return `(?:` + strings.Join(alts, "|") + `)`
}

func hasControl(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// flagPattern matches the flag f where git accepts it: a long flag also with
// "=value", a one-letter short flag also inside a bundle (-f in -fu).
func (st *style) flagPattern(f string) string {
	switch {
	case strings.HasPrefix(f, "--") && !strings.Contains(f, "="):
		return regexp.QuoteMeta(f) + `(?:=` + st.piece + `*)?`
	case len(f) == 2 && isLetter(f[1]):
		return `-[A-Za-z]*` + f[1:] + `[A-Za-z]*`
	}
	return st.spell(f, false)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func allFlags(args []string) bool {
	for _, a := range args {
		if len(a) < 2 || a[0] != '-' || a == "--" {
			return false
		}
	}
	return true
}

// permutations returns every order of up to three flags, else the flags as
// written, so "git push --force --no-verify" matches either order.
func permutations(flags []string) [][]string {
	if len(flags) > 3 {
		return [][]string{flags}
	}
	if len(flags) <= 1 {
		return [][]string{flags}
	}
	var res [][]string
	for i := range flags {
		rest := make([]string, 0, len(flags)-1)
		rest = append(rest, flags[:i]...)
		rest = append(rest, flags[i+1:]...)
		for _, p := range permutations(rest) {
			res = append(res, append([]string{flags[i]}, p...))
		}
	}
	return res
}

func gitCleanForce(args []string) bool {
	for _, a := range args {
		if a == "--force" || strings.HasPrefix(a, "--force=") ||
			len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "f") {
			return true
		}
	}
	return false
}

func sedInPlace(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if strings.HasPrefix(a, "--i") {
			return true
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' {
			for _, c := range []byte(a[1:]) {
				if c == 'i' {
					return true
				}
				if !isLetter(c) || c == 'e' || c == 'f' || c == 'l' {
					break // the rest is an option's value
				}
			}
		}
	}
	return false
}
