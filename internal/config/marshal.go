package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agent-shim/agent-shim/statefile"
)

// span is where the value of an object member lies in File.text.
type span struct {
	key        string
	start, end int
}

// layout records the members of the objects Marshal rewrites, in order.
type layout struct {
	top, user, grants, shim []span
}

// member is one key of an object to write: either a value kept from the
// file (raw) or one this package writes.
type member struct {
	key   string
	raw   string
	write func(w *writer, depth int)
}

// object is an object to write, as an ordered list of members.
type object []member

// kept returns the members of an object as they are in the file.
func (f *File) kept(spans []span) object {
	o := make(object, len(spans))
	for i, s := range spans {
		o[i] = member{key: s.key, raw: f.text[s.start:s.end]}
	}
	return o
}

// set replaces the value of key where it first appears, dropping its
// duplicates (encoding/json, and Parse, take the last one), or appends
// the key when the object does not have it.
func (o object) set(key string, write func(w *writer, depth int)) object {
	found := false
	out := o[:0:0]
	for _, m := range o {
		if m.key != key {
			out = append(out, m)
			continue
		}
		if !found {
			out = append(out, member{key: key, write: write})
			found = true
		}
	}
	if !found {
		out = append(out, member{key: key, write: write})
	}
	return out
}

func (o object) has(key string) bool {
	for _, m := range o {
		if m.key == key {
			return true
		}
	}
	return false
}

// writer writes indented JSON: two spaces per level, as json.MarshalIndent.
type writer struct {
	buf []byte
	err error
}

func (w *writer) indent(depth int) {
	w.buf = append(w.buf, '\n')
	for range depth {
		w.buf = append(w.buf, ' ', ' ')
	}
}

func (w *writer) object(o object, depth int) {
	if len(o) == 0 {
		w.buf = append(w.buf, '{', '}')
		return
	}
	w.buf = append(w.buf, '{')
	for i, m := range o {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.indent(depth + 1)
		w.buf = appendQuoted(w.buf, m.key)
		w.buf = append(w.buf, ':', ' ')
		if m.write != nil {
			m.write(w, depth+1)
		} else {
			w.raw(m.raw, depth+1)
		}
	}
	w.indent(depth)
	w.buf = append(w.buf, '}')
}

// raw re-indents a value kept from the file.
func (w *writer) raw(raw string, depth int) {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(raw), strings.Repeat("  ", depth), "  "); err != nil && w.err == nil {
		w.err = err
	}
	w.buf = append(w.buf, b.Bytes()...)
}

// value writes any value through encoding/json (for the rarely changed
// user keys of the shim's section).
func (w *writer) value(v any, depth int) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.raw(strings.TrimRight(b.String(), "\n"), depth)
}

func (w *writer) strings(list []string, depth int) {
	if len(list) == 0 {
		w.buf = append(w.buf, '[', ']')
		return
	}
	w.buf = append(w.buf, '[')
	for i, s := range list {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.indent(depth + 1)
		w.buf = appendQuoted(w.buf, s)
	}
	w.indent(depth)
	w.buf = append(w.buf, ']')
}

// rules writes the shim's rules. A rule whose grants are all in the grant
// lists names them by digest (statefile.Digest) instead of repeating their
// text: Parse looks them up again. Others keep the text, so that reading
// the file back gives the same rules.
func (w *writer) rules(rules []Rule, lists Grants, depth int) {
	var inLists map[string]bool
	if len(rules) > 0 {
		inLists = make(map[string]bool, len(lists.Allow)+len(lists.Ask)+len(lists.Deny))
		for _, l := range [][]string{lists.Allow, lists.Ask, lists.Deny} {
			for _, g := range l {
				inLists[g] = true
			}
		}
	}
	if len(rules) == 0 {
		w.buf = append(w.buf, '[', ']')
		return
	}
	// One rule per line: indenting each member would add a fifth to
	// the rules' size. The rules of one manifest file whose grants all
	// go by digest are a group that names the file once (see decode.go).
	// Each rule's grants as written, digests hashed once.
	type written struct {
		key  string
		list []string
	}
	ws := make([]written, len(rules))
	for i, r := range rules {
		ws[i].key, ws[i].list = ruleGrants(r.Grants, inLists)
	}
	w.buf = append(w.buf, '[')
	for i := 0; i < len(rules); i++ {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.indent(depth + 1)
		r := rules[i]
		if ws[i].key == "digests" && r.Source.File != "" {
			j := i + 1
			for j < len(rules) && sameFile(rules[j], r) && ws[j].key == "digests" {
				j++
			}
			digests := make([][]string, 0, j-i)
			for _, x := range ws[i:j] {
				digests = append(digests, x.list)
			}
			w.group(rules[i:j], digests, depth+1)
			i = j - 1
			continue
		}
		w.buf = append(w.buf, `{"line": `...)
		w.buf = appendQuoted(w.buf, r.Line)
		w.buf = append(w.buf, `, "category": `...)
		w.buf = appendQuoted(w.buf, r.Category)
		w.buf = append(w.buf, `, "source": {"overlay": `...)
		w.buf = appendQuoted(w.buf, r.Source.Overlay)
		w.buf = append(w.buf, `, "file": `...)
		w.buf = appendQuoted(w.buf, r.Source.File)
		w.buf = append(w.buf, `, "line": `...)
		w.buf = strconv.AppendInt(w.buf, int64(r.Source.Line), 10)
		key, list := ws[i].key, ws[i].list
		w.buf = append(w.buf, `}, "`...)
		w.buf = append(w.buf, key...)
		w.buf = append(w.buf, `": [`...)
		for j, g := range list {
			if j > 0 {
				w.buf = append(w.buf, ',', ' ')
			}
			w.buf = appendQuoted(w.buf, g)
		}
		w.buf = append(w.buf, ']', '}')
	}
	w.indent(depth)
	w.buf = append(w.buf, ']')
}

// sameFile reports whether two rules come from the same manifest file.
func sameFile(a, b Rule) bool {
	return a.Category == b.Category && a.Source.Overlay == b.Source.Overlay && a.Source.File == b.Source.File
}

// group writes rules of one file, all of whose grants go by digest
// (digests[i] are rules[i]'s):
// {"file": …, "overlay": …, "category": …, "lines": [[line, text, digest…], …]}.
func (w *writer) group(rules []Rule, digests [][]string, depth int) {
	r := rules[0]
	w.buf = append(w.buf, `{"file": `...)
	w.buf = appendQuoted(w.buf, r.Source.File)
	w.buf = append(w.buf, `, "overlay": `...)
	w.buf = appendQuoted(w.buf, r.Source.Overlay)
	w.buf = append(w.buf, `, "category": `...)
	w.buf = appendQuoted(w.buf, r.Category)
	w.buf = append(w.buf, `, "lines": [`...)
	for i, r := range rules {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.indent(depth + 1)
		w.buf = append(w.buf, '[')
		w.buf = strconv.AppendInt(w.buf, int64(r.Source.Line), 10)
		w.buf = append(w.buf, ", "...)
		w.buf = appendQuoted(w.buf, r.Line)
		for _, dg := range digests[i] {
			w.buf = append(w.buf, ", "...)
			w.buf = appendQuoted(w.buf, dg)
		}
		w.buf = append(w.buf, ']')
	}
	w.indent(depth)
	w.buf = append(w.buf, "]}"...)
}

// ruleGrants returns a rule's grants to write: by digest ("digests") when
// every one is in the lists, else as text ("grants").
func ruleGrants(grants []string, inLists map[string]bool) (key string, list []string) {
	byDigest := len(grants) > 0
	for i, g := range grants {
		if !inLists[g] || slices.Contains(grants[:i], g) {
			byDigest = false
			break
		}
	}
	if !byDigest {
		return "grants", grants
	}
	digests := make([]string, len(grants))
	for i, g := range grants {
		digests[i] = statefile.Digest(g)
	}
	return "digests", digests
}

func str(s string) func(*writer, int) {
	return func(w *writer, _ int) { w.buf = appendQuoted(w.buf, s) }
}

func num(n int) func(*writer, int) {
	return func(w *writer, _ int) { w.buf = strconv.AppendInt(w.buf, int64(n), 10) }
}

// appendQuoted appends s as a JSON string the way encoding/json does with
// HTML escaping off: grants are regular expressions that people read.
// Grants are escape-dense (a backslash every few bytes), so bytes are
// copied one by one rather than in runs.
func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		b := s[i]
		if b >= 0x20 && b < utf8.RuneSelf && b != '"' && b != '\\' {
			dst = append(dst, b)
			i++
			continue
		}
		if b < utf8.RuneSelf {
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// Marshal returns the file's content with the current grants and shim
// section: every key this package does not own, and the order of keys at
// every level, is kept; new keys go last. The output is indented with two
// spaces and ends in a newline.
func (f *File) Marshal() ([]byte, error) {
	if f.partial {
		return nil, fmt.Errorf("encoding %s: read with LoadSettings, without its grants and rules", f.Path)
	}
	grants := f.kept(f.layout.grants).
		set("allow", func(w *writer, d int) { w.strings(f.Grants.Allow, d) }).
		set("ask", func(w *writer, d int) { w.strings(f.Grants.Ask, d) }).
		set("deny", func(w *writer, d int) { w.strings(f.Grants.Deny, d) })
	user := f.kept(f.layout.user).
		set("globalPermissionGrants", func(w *writer, d int) { w.object(grants, d) })
	top := f.kept(f.layout.top).
		set("userSettings", func(w *writer, d int) { w.object(user, d) })
	if top.has("agentShim") || !reflect.DeepEqual(f.Shim, Shim{}) {
		shim := f.shimObject()
		top = top.set("agentShim", func(w *writer, d int) { w.object(shim, d) })
	}
	w := &writer{buf: make([]byte, 0, f.sizeHint())}
	w.object(top, 0)
	if w.err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f.Path, w.err)
	}
	return append(w.buf, '\n'), nil
}

// sizeHint estimates the size of the output, to allocate it once.
func (f *File) sizeHint() int {
	quoted := func(s string) int {
		return len(s) + strings.Count(s, `\`) + strings.Count(s, `"`) + 16
	}
	n := len(f.text) + 4096
	for _, l := range [][]string{f.Grants.Allow, f.Grants.Ask, f.Grants.Deny} {
		for _, g := range l {
			n += quoted(g)
		}
	}
	for _, r := range f.Shim.Rules {
		n += quoted(r.Line) + quoted(r.Source.File) + 200 + 48*len(r.Grants)
	}
	return n
}

// shimObject is the shim's section to write. version, profile and rules
// are always written; the user's keys only when they were changed in
// memory, so an untouched value keeps its form.
func (f *File) shimObject() object {
	s := f.Shim
	version := s.Version
	if version == 0 {
		version = Version
	}
	o := f.kept(f.layout.shim).
		set("version", num(version)).
		set("profile", str(s.Profile)).
		set("rules", func(w *writer, d int) { w.rules(s.Rules, f.Grants, d) })
	if s.Mode != f.orig.Mode {
		o = o.set("mode", str(s.Mode))
	}
	if s.Shell != f.orig.Shell {
		o = o.set("shell", str(s.Shell))
	}
	if s.Runtime != f.orig.Runtime {
		o = o.set("runtime", str(s.Runtime))
	}
	if s.RequireHook != f.orig.RequireHook {
		o = o.set("requireHook", func(w *writer, d int) { w.value(s.RequireHook, d) })
	}
	if !reflect.DeepEqual(s.PathScope, f.orig.PathScope) {
		o = o.set("pathScope", func(w *writer, d int) { w.value(s.PathScope, d) })
	}
	if !slices.Equal(s.Secrets, f.orig.Secrets) {
		o = o.set("secrets", func(w *writer, d int) { w.value(s.Secrets, d) })
	}
	if !reflect.DeepEqual(s.Tools, f.orig.Tools) {
		o = o.set("tools", func(w *writer, d int) { w.value(s.Tools, d) })
	}
	if len(s.Programs) > 0 || len(f.orig.Programs) > 0 {
		o = o.set("programs", func(w *writer, d int) { w.value(s.Programs, d) })
	}
	return o
}
