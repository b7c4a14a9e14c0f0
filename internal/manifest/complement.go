package manifest

import (
	"regexp"
	"sort"
	"strings"
)

// RE2 has no negative lookahead, so "any name except these" is spelled out:
// complementParts builds a regex for the names that are neither one of the
// given words nor start with one of the given prefixes, from a trie of the
// forbidden words.

type trie struct {
	kids map[byte]*trie
	word bool // the path to this node is forbidden
	all  bool // the path and everything below it is forbidden
}

func (t *trie) add(s string, all bool) {
	for i := 0; i < len(s); i++ {
		if t.all {
			return
		}
		if t.kids == nil {
			t.kids = map[byte]*trie{}
		}
		k := t.kids[s[i]]
		if k == nil {
			k = &trie{}
			t.kids[s[i]] = k
		}
		t = k
	}
	if all {
		t.all, t.kids = true, nil
	} else {
		t.word = true
	}
}

type namer struct {
	extra string
	one   string // regex for one name character after the first
}

// complementParts returns a regex for the names that are not in words and
// have no prefix in prefixes, in two parts. Names are made of word
// characters (\w) and the bytes of extra, and start with a word character.
//
// A name outside the set either leaves the trie of forbidden words at some
// character (one no forbidden word continues with there) and then goes on
// with any name characters, or ends exactly at a node that is neither a
// forbidden word nor the root (a proper prefix of a forbidden word: -e is
// not -exec). d matches the first kind up to and with the character where
// it leaves the trie, e the second kind ("" when there are none): the names
// are d followed by any name characters, or e. Spelled apart, the tail of
// any name characters is written once instead of once per trie branch, and
// a caller may let d be followed by more than name characters.
func complementParts(extra string, words, prefixes []string) (d, e string) {
	if strings.Contains(extra, "*") {
		panic("complement: * in extra")
	}
	root := &trie{}
	for _, p := range prefixes {
		root.add(p, true)
	}
	for _, w := range words {
		root.add(w, false)
	}
	n := namer{extra: extra, one: `\w`}
	if extra != "" {
		n.one = `[\w` + inClass(extra) + `]`
	}
	d, e, _, ok := n.gen(root, true)
	if !ok {
		panic("complement: empty language")
	}
	return d, e
}

// gen returns, for the rest of a name below t: d, the regex for the part up
// to and with the first character where the name leaves the trie (what
// follows is any name characters); and e, the regex for the names that end
// inside the trie, when there are any (hasE). ok is false when no name
// goes through t.
func (n namer) gen(t *trie, top bool) (d, e string, hasE, ok bool) {
	if t.all {
		return "", "", false, false
	}
	if len(t.kids) == 0 && !top {
		// A forbidden word's end: it may only go on.
		return n.one, "", false, true
	}
	// Word characters no child continues with.
	var not strings.Builder
	not.WriteString(`\W`)
	keys := make([]byte, 0, len(t.kids))
	for k := range t.kids {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		if isWord(k) {
			not.WriteByte(k)
		}
	}
	ds := []string{`[^` + not.String() + `]`}
	if not.String() == `\W` {
		ds[0] = `\w`
	}
	var extra strings.Builder
	for i := 0; i < len(n.extra) && !top; i++ {
		if t.kids[n.extra[i]] == nil {
			extra.WriteByte(n.extra[i])
		}
	}
	switch extra.Len() {
	case 0:
	case 1:
		ds = append(ds, regexp.QuoteMeta(extra.String()))
	default:
		ds = append(ds, `[`+inClass(extra.String())+`]`)
	}
	var es []string
	for _, k := range keys {
		kd, ke, kHasE, ok := n.gen(t.kids[k], false)
		if !ok {
			continue
		}
		c := regexp.QuoteMeta(string(k))
		ds = append(ds, c+kd)
		if kHasE {
			es = append(es, c+ke)
		}
	}
	d = group(ds)
	end := !top && !t.word // a name may end here
	switch {
	case len(es) == 0:
		return d, "", end, true
	case end && len(es) == 1 && len(es[0]) == 1:
		return d, es[0] + "?", true, true
	case end:
		return d, "(?:" + strings.Join(es, "|") + ")?", true, true
	}
	return d, group(es), true, true
}

// group returns the alternation of alts, grouped when there is more than
// one, so that it can be concatenated (not quantified) as it is.
func group(alts []string) string {
	if len(alts) == 1 {
		return alts[0]
	}
	return "(?:" + strings.Join(alts, "|") + ")"
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// classBytes spells the bytes of s so that each means itself inside or
// outside a character class.
func classBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isWord(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// inClass spells the bytes of s (no word characters, no "*") inside a
// character class, shorter than classBytes: "." as itself, "-" last.
func inClass(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '-':
		case '\\', ']', '[', '^':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	if strings.Contains(s, "-") {
		b.WriteByte('-')
	}
	return b.String()
}

// alternation returns a regex matching exactly the names in words, with
// common prefixes spelled once (LANG(?:UAGE)?); a word ending in "*"
// matches any name starting with the rest (LC_\w*). It is "" when words is
// empty.
func alternation(words []string) string {
	root := &trie{}
	for _, w := range words {
		stem, all := strings.CutSuffix(w, "*")
		if stem != "" || all {
			root.add(stem, all)
		}
	}
	return root.positive()
}

func (t *trie) positive() string {
	if t.all {
		return `\w*`
	}
	keys := make([]byte, 0, len(t.kids))
	for k := range t.kids {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var alts []string
	for _, k := range keys {
		alts = append(alts, classBytes(string(k))+t.kids[k].positive())
	}
	switch {
	case len(alts) == 0:
		return ""
	case len(alts) == 1 && !t.word:
		return alts[0]
	case t.word:
		return "(?:" + strings.Join(alts, "|") + ")?"
	}
	return "(?:" + strings.Join(alts, "|") + ")"
}
