package manifest

import (
	"sort"
	"strings"
)

// RE2 has no negative lookahead, so "any name except these" is spelled out:
// complement builds a regex for the names that are neither one of the given
// words nor start with one of the given prefixes. It walks a trie of the
// forbidden words; at each node a name may stop (unless the node is a
// forbidden word), continue with a character no forbidden word continues
// with (then anything), or follow a child. Names are made of word characters
// (\w) and the bytes of extra; a name starts with a letter or "_" when
// letterFirst is set.

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
	extra       string
	letterFirst bool
	rest        string // regex for the rest of a name
}

// complement returns a regex matching the names that are not in words and
// have no prefix in prefixes. With fold, matching ignores ASCII case: words
// and prefixes must then be lower case.
func complement(extra string, letterFirst bool, words, prefixes []string, fold bool) string {
	root := &trie{}
	for _, p := range prefixes {
		root.add(p, true)
	}
	for _, w := range words {
		root.add(w, false)
	}
	n := namer{extra: extra, letterFirst: letterFirst, rest: `\w*`}
	if strings.Contains(extra, "*") {
		panic("complement: * in extra")
	}
	if extra != "" {
		n.rest = `[\w` + inClass(extra) + `]*`
	}
	re, ok := n.gen(root, true)
	if !ok {
		panic("complement: empty language")
	}
	if fold {
		return "(?i:" + re + ")"
	}
	return re
}

func (n namer) gen(t *trie, top bool) (string, bool) {
	if t.all {
		return "", false
	}
	if len(t.kids) == 0 && !top {
		// A forbidden word's end: it may only go on.
		return strings.Replace(n.rest, "*", "+", 1), true
	}
	var alts []string
	// Word characters no child continues with.
	var not strings.Builder
	not.WriteString(`\W`)
	if top && n.letterFirst {
		not.WriteString(`0-9`)
	}
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
	other := `[^` + not.String() + `]`
	var extra strings.Builder
	for i := 0; i < len(n.extra) && !top; i++ {
		if t.kids[n.extra[i]] == nil {
			extra.WriteByte(n.extra[i])
		}
	}
	if extra.Len() > 0 {
		other = `(?:` + other + `|[` + inClass(extra.String()) + `])`
	}
	alts = append(alts, other+n.rest)
	for _, k := range keys {
		if re, ok := n.gen(t.kids[k], false); ok {
			alts = append(alts, classBytes(string(k))+re)
		}
	}
	empty := !top && !t.word
	re := "(?:" + strings.Join(alts, "|") + ")"
	if empty {
		re += "?"
	}
	return re, true
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
