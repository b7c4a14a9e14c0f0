package gate

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agent-shim/agent-shim/matcher"
)

func TestGlobClasses(t *testing.T) {
	tests := []struct {
		glob, name string
		want       bool
	}{
		{`[\]]`, "]", true}, // was a class of `\`, then a literal `]`
		{`[\]]`, `\`, false},
		{`[\]]`, `\]`, false},
		{`rm [\]x]*`, "rm ]", true},
		{`[a\-z]`, "-", true},
		{`[a\-z]`, "b", false},
		{`[]a]`, "]", true},
		{`[!]a]`, "b", true},
		{`[!]a]`, "]", false},
		{`[!a]`, "/", false},
		{`[^a]`, "/", false},
		{`[/]`, "/", true},
		{`[z-a]`, "b", false},
		{`[z-a]x`, "x", false},
		{`[é-ü]`, "ö", true},
		{`**/**`, "a/b", true},
		{`**/**`, "a", true},
		{`/etc/**/**`, "/etc/a/b/c", true},
		{`a/**/b`, "a/b", true},
		{`a/**/b`, "a/x/y/b", true},
		{`a/**b`, "a/x/yb", true},
		{`***`, "a/b", true},
		{`*`, "a/b", false},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{`\é`, "é", true},
	}
	for _, tc := range tests {
		re, err := matcher.Glob(tc.glob)
		if err != nil {
			t.Errorf("%q: %v", tc.glob, err)
			continue
		}
		if got := re.MatchString(tc.name); got != tc.want {
			t.Errorf("%q matching %q: %v, want %v", tc.glob, tc.name, got, tc.want)
		}
		if want, err := globOracle(tc.glob, tc.name); err != nil || want != tc.want {
			t.Errorf("%q matching %q: the oracle says %v, %v", tc.glob, tc.name, want, err)
		}
	}
	for _, bad := range []string{`[`, `[]`, `[!]`, `[\`, `[a-]`, `[-a]`, `[a-]]`, `a\`, "\xff", `[a--]`} {
		if _, err := matcher.Glob(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
		if _, err := globOracle(bad, ""); err == nil {
			t.Errorf("%q: the oracle gives no error", bad)
		}
	}
}

// A deny pattern with a quoted `]` in a class denies.
func TestGlobDenyBracket(t *testing.T) {
	p, err := NewToolPolicy("/p", nil, []string{`bash:rm [\]]*`})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.match(identify("Bash"), "rm ]x"); got != toolDeny {
		t.Errorf("rm ]x: %v, want deny", got)
	}
}

// FuzzGlob holds matcher.Glob to path.Match, through globOracle, which
// rewrites the documented differences into path.Match's terms.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{`[\]]`, `*.go`, `a/**/b`, `[!a-z]?`, `**/**`, `[]a]`, `\*x`, `[^/]`, `a[\-]b`, `[z-a]`} {
		f.Add(s, "a/b]")
		f.Add(s, "]")
		f.Add(s, "x.go")
	}
	f.Fuzz(func(t *testing.T, glob, name string) {
		// The oracle is cubic in the name: long inputs are cut, not
		// skipped.
		glob, name = glob[:min(len(glob), 64)], name[:min(len(name), 64)]
		re, err := matcher.Glob(glob)
		want, oerr := globOracle(glob, name)
		if (err == nil) != (oerr == nil) {
			t.Fatalf("glob %q: matcher.Glob error %v, path.Match error %v", glob, err, oerr)
		}
		if err != nil {
			return
		}
		if got := re.MatchString(name); got != want {
			t.Fatalf("glob %q (regexp %s) matching %q: %v, path.Match says %v", glob, re, name, got, want)
		}
	})
}

// globOracle matches name against glob by matcher.Glob's documented rules,
// built on path.Match: the glob is cut at each `*`, `**` and `**/` into
// star-free path.Match patterns (path.Match's own `*` may end inside a
// multi-byte character), each negated class gets `/` added to what it
// excludes, `[!` becomes `[^`, a first `]` in a class is quoted, and each
// byte of name that is not UTF-8 is U+FFFD (as regexp reads it).
func globOracle(glob, name string) (bool, error) {
	if !utf8.ValidString(glob) {
		return false, errors.New("not UTF-8")
	}
	var pieces, seps []string
	var cur strings.Builder
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '\\':
			if i+1 == len(glob) {
				return false, path.ErrBadPattern
			}
			cur.WriteString(glob[i : i+2])
			i++
		case '*':
			n := 1
			for i+1 < len(glob) && glob[i+1] == '*' {
				i++
				n++
			}
			sep := "*" // cut here too: path.Match's * may split a character
			if n > 1 {
				sep = "**"
			}
			if n > 1 && i+1 < len(glob) && glob[i+1] == '/' {
				i++
				sep = "**/"
			}
			pieces, seps = append(pieces, cur.String()), append(seps, sep)
			cur.Reset()
		case '[':
			j := i + 1
			neg := j < len(glob) && (glob[j] == '!' || glob[j] == '^')
			if neg {
				j++
			}
			cur.WriteByte('[')
			if neg {
				cur.WriteByte('^')
			}
			if j < len(glob) && glob[j] == ']' {
				cur.WriteString(`\]`)
				j++
			}
			closed := false
			for ; j < len(glob); j++ {
				if glob[j] == '\\' && j+1 < len(glob) {
					cur.WriteString(glob[j : j+2])
					j++
					continue
				}
				if glob[j] == ']' {
					closed = true
					break
				}
				cur.WriteByte(glob[j])
			}
			if !closed {
				return false, path.ErrBadPattern
			}
			if neg {
				s := cur.String()
				if strings.HasSuffix(s, "-") && !strings.HasSuffix(s, `\-`) {
					return false, path.ErrBadPattern // `-]`: no range end
				}
				cur.WriteByte('/')
			}
			cur.WriteByte(']')
			i = j
		default:
			cur.WriteByte(c)
		}
	}
	pieces = append(pieces, cur.String())
	for _, p := range pieces {
		if _, err := path.Match(p, ""); err != nil {
			return false, err
		}
	}
	var nb strings.Builder
	for i := 0; i < len(name); {
		r, w := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && w == 1 {
			nb.WriteRune(utf8.RuneError)
		} else {
			nb.WriteString(name[i : i+w])
		}
		i += w
	}
	name = nb.String()
	// match(k, pos): pieces[k:] match name[pos:].
	memo := map[[2]int]bool{}
	var match func(k, pos int) bool
	match = func(k, pos int) bool {
		key := [2]int{k, pos}
		if v, ok := memo[key]; ok {
			return v
		}
		ok := false
		boundary := func(i int) bool { return i == len(name) || utf8.RuneStart(name[i]) }
		for e := pos; e <= len(name) && !ok; e++ {
			if !boundary(e) {
				continue
			}
			if m, _ := path.Match(pieces[k], name[pos:e]); !m {
				continue
			}
			if k == len(pieces)-1 {
				ok = e == len(name)
				continue
			}
			for f := e; f <= len(name) && !ok; f++ {
				if !boundary(f) || seps[k] == "**/" && f > e && name[f-1] != '/' {
					continue
				}
				if seps[k] == "*" && strings.Contains(name[e:f], "/") {
					break
				}
				ok = match(k+1, f)
			}
		}
		memo[key] = ok
		return ok
	}
	return match(0, 0), nil
}
