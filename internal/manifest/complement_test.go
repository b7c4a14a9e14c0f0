package manifest

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// complement is the whole language of complementParts as one regex.
func complement(extra string, words, prefixes []string) string {
	d, e := complementParts(extra, words, prefixes)
	one := `\w`
	if extra != "" {
		one = `[\w` + inClass(extra) + `]`
	}
	if e == "" {
		return d + one + "*"
	}
	return "(?:" + d + one + "*|" + e + ")"
}

func TestComplement(t *testing.T) {
	tests := []struct {
		extra         string
		words, prefix []string
		yes, no       []string
	}{
		{
			"", []string{"PATH", "ENV"}, []string{"LD_", "GIT_"},
			[]string{"P", "PA", "PAT", "PATHS", "XPATH", "ENVX", "EN", "LD", "LDX", "LD2", "GIT", "GITX", "path", "_A", "A1", "1A"},
			[]string{"PATH", "ENV", "LD_", "LD_PRELOAD", "GIT_DIR", "GIT_", "", "A-B", "A.B"},
		},
		{
			".-", []string{"exec", "ok"}, nil,
			[]string{"e", "ex", "exe", "execdir", "exec-x", "o", "okdir", "name", "1", "a.b"},
			[]string{"exec", "ok", "", "-exec", ".a"},
		},
		{
			".-", nil, []string{"core.pager", "alias."},
			[]string{"core", "core.editor", "core.page", "aliasx", "alia"},
			[]string{"core.pager", "core.pager.x", "alias.st", "alias.x"},
		},
		{
			"-", []string{"g", "gl", "glo", "glob"}, []string{"globa", "n", "u"},
			[]string{"x", "g-", "gx", "gla", "glob-", "globb", "glob1", "o-n"},
			[]string{"", "g", "gl", "glo", "glob", "globa", "global", "n", "node", "user", "-x", "g.x"},
		},
	}
	for _, tc := range tests {
		re := regexp.MustCompile("^" + complement(tc.extra, tc.words, tc.prefix) + "$")
		for _, s := range tc.yes {
			if !re.MatchString(s) {
				t.Errorf("complement(%v, %v) does not match %q", tc.words, tc.prefix, s)
			}
		}
		for _, s := range tc.no {
			if re.MatchString(s) {
				t.Errorf("complement(%v, %v) matches %q", tc.words, tc.prefix, s)
			}
		}
	}
}

func TestFactor(t *testing.T) {
	keys := []string{"color.*", "core.abbrev", "core.eol", "user.name", "tag.sort", "log.*", "a.b.*"}
	re := regexp.MustCompile("^(?:" + factor(keys) + ")$")
	for _, s := range []string{"color.ui", "core.abbrev", "core.eol", "user.name", "tag.sort", "log.x.y", "a.b.c"} {
		if !re.MatchString(s) {
			t.Errorf("factor(%q) does not match %q", keys, s)
		}
	}
	for _, s := range []string{"color.", "core.pager", "core.", "core.abbrevx", "user.email", "tag", "alias.x", "a.b", "a.bc", "colorx.ui"} {
		if re.MatchString(s) {
			t.Errorf("factor(%q) matches %q", keys, s)
		}
	}
}

func TestAlternation(t *testing.T) {
	words := []string{"LANG", "LANGUAGE", "LC_*", "TZ", "TERM", "CI", "CLICOLOR", "CLICOLOR_FORCE"}
	re := regexp.MustCompile("^" + alternation(words) + "$")
	for _, s := range []string{"LANG", "LANGUAGE", "LC_", "LC_ALL", "TZ", "TERM", "CI", "CLICOLOR", "CLICOLOR_FORCE"} {
		if !re.MatchString(s) {
			t.Errorf("alternation(%q) does not match %q", words, s)
		}
	}
	for _, s := range []string{"", "LAN", "LANGU", "LANGX", "LC", "TERMX", "T", "C", "CLICOLOR_", "PATH", "lang"} {
		if re.MatchString(s) {
			t.Errorf("alternation(%q) matches %q", words, s)
		}
	}
	if got := alternation(nil); got != "" {
		t.Errorf("alternation(nil) = %q, want \"\"", got)
	}
}

// TestComplementExhaustive compares complement with its definition on
// every name of up to five characters over a small alphabet, for random
// sets of words and prefixes.
func TestComplementExhaustive(t *testing.T) {
	const alphabet = "ab1_-."
	var names []string
	var grow func(s string)
	grow = func(s string) {
		names = append(names, s)
		if len(s) < 5 {
			for i := range len(alphabet) {
				grow(s + alphabet[i:i+1])
			}
		}
	}
	grow("")
	rnd := rand.New(rand.NewPCG(1, 2))
	pick := func(n int, extra string) []string {
		chars := "ab1" + extra
		var out []string
		for range rnd.IntN(n + 1) {
			w := alphabet[rnd.IntN(2):][:1]
			for range rnd.IntN(4) {
				w += chars[rnd.IntN(len(chars)):][:1]
			}
			out = append(out, w)
		}
		return out
	}
	for range 300 {
		extra := []string{"", "-", ".-"}[rnd.IntN(3)]
		words, prefixes := pick(4, extra), pick(2, extra)
		re := regexp.MustCompile("^" + complement(extra, words, prefixes) + "$")
		for _, s := range names {
			want := s != "" && isWord(s[0]) &&
				!slices.Contains(words, s) &&
				!slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
			for i := 1; i < len(s); i++ {
				want = want && (isWord(s[i]) || strings.IndexByte(extra, s[i]) >= 0)
			}
			if re.MatchString(s) != want {
				t.Fatalf("complement(%q, %q, %q) on %q: match=%v, want %v\n%s", extra, words, prefixes, s, !want, want, re)
			}
		}
	}
}
