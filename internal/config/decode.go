package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// decoder is a single-pass JSON decoder for the parts of config.json this
// package reads. It validates the whole document (unknown keys included)
// as strictly as encoding/json, reports syntax errors with line and column
// and shape errors with the JSON path, and is several times faster than
// encoding/json's reflection, which matters because the shim loads the
// file for every command it decides.
//
// Keys match exactly (encoding/json matches them case-insensitively; the
// agent does not). A key that appears twice in one object is an error, at
// any depth: encoding/json would keep the last copy and drop the first one
// (with the grants a person added there) when the file is written back.
type decoder struct {
	data  []byte
	text  string // data as a string: decoded strings are its substrings
	pos   int
	depth int
	// path is the stack of keys and indexes leading to the current value,
	// formatted only for an error.
	path []step
	// scratch holds an unescaped string before it becomes one.
	scratch []byte
	// seen interns strings: a rule's grants repeat the lists' grants.
	seen map[string]string
	// refs are the digests of every rule, resolved against the grant
	// lists once the whole file is read.
	refs []ruleRefs
	// settingsOnly skips the grant lists and the rules (LoadSettings).
	settingsOnly bool
}

// ruleRefs are the grant digests of the rule at index rule.
type ruleRefs struct {
	rule    int
	digests []string
}

// step is a key (or, when key is "", an index) on the path to a value.
type step struct {
	key   string
	index int
}

// where formats the path to the current value.
func (d *decoder) where() string {
	var b strings.Builder
	for _, s := range d.path {
		if s.key == "" {
			fmt.Fprintf(&b, "[%d]", s.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	if b.Len() == 0 {
		return "top level"
	}
	return b.String()
}

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

// syntaxError is a malformed document at a byte offset.
type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string { return e.msg }

// shapeError is a well-formed value of the wrong type at a JSON path.
type shapeError struct {
	offset int
	path   string
	msg    string
}

func (e *shapeError) Error() string { return e.path + ": " + e.msg }

func (d *decoder) syntax(format string, args ...any) error {
	return &syntaxError{offset: d.pos, msg: fmt.Sprintf(format, args...)}
}

// unexpected reports the byte at the current position.
func (d *decoder) unexpected(context string) error {
	if d.pos >= len(d.data) {
		return d.syntax("unexpected end of JSON input")
	}
	return d.syntax("invalid character %s %s", quoteChar(d.data[d.pos]), context)
}

func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

func (d *decoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, or 0 at the end.
func (d *decoder) peek() byte {
	d.ws()
	if d.pos >= len(d.data) {
		return 0
	}
	return d.data[d.pos]
}

// kind names the JSON type of the value starting with c.
func kind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// null consumes a null literal if one is next.
func (d *decoder) null() (bool, error) {
	if d.peek() != 'n' {
		return false, nil
	}
	return true, d.literal("null")
}

func (d *decoder) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if d.pos >= len(d.data) {
			return d.syntax("unexpected end of JSON input")
		}
		if d.data[d.pos] != word[i] {
			return d.unexpected(fmt.Sprintf("in literal %s (expecting %s)", word, quoteChar(word[i])))
		}
		d.pos++
	}
	return nil
}

// shape reports that the value at the current position is not what the
// schema expects.
func (d *decoder) shape(want string) error {
	c := d.peek()
	// A syntax error inside the value wins over the shape error.
	start := d.pos
	if err := d.skip(); err != nil {
		return err
	}
	return &shapeError{offset: start, path: d.where(), msg: fmt.Sprintf("expected %s, found %s", want, kind(c))}
}

// object decodes an object (or null) member by member: member is called
// with each key, positioned at its value, and must consume the value.
func (d *decoder) object(member func(key string) error) error {
	if ok, err := d.null(); ok || err != nil {
		return err
	}
	if d.peek() != '{' {
		return d.shape("an object")
	}
	d.pos++
	if d.depth++; d.depth > maxDepth {
		return d.syntax("exceeded max depth")
	}
	if d.peek() == '}' {
		d.pos++
		d.depth--
		return nil
	}
	var keys []string // objects are small: a scan beats a map
	var many map[string]bool
	for {
		if d.peek() != '"' {
			return d.unexpected("looking for beginning of object key string")
		}
		keyPos := d.pos
		key, err := d.str(true)
		if err != nil {
			return err
		}
		if many == nil && len(keys) == 16 {
			many = make(map[string]bool, 32)
			for _, k := range keys {
				many[k] = true
			}
		}
		dup := false
		if many != nil {
			dup = many[key]
			many[key] = true
		} else {
			dup = slices.Contains(keys, key)
			keys = append(keys, key)
		}
		if dup {
			where := ""
			if len(d.path) > 0 {
				where = " in " + d.where()
			}
			return &syntaxError{offset: keyPos, msg: fmt.Sprintf("duplicate key %s%s (the agent and encoding/json would drop the first copy)", strconv.Quote(key), where)}
		}
		if d.peek() != ':' {
			return d.unexpected("after object key")
		}
		d.pos++
		d.path = append(d.path, step{key: key})
		if err := member(key); err != nil {
			return err
		}
		d.path = d.path[:len(d.path)-1]
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			return nil
		default:
			return d.unexpected("after object key:value pair")
		}
	}
}

// array decodes an array (or null) element by element.
func (d *decoder) array(elem func() error) error {
	if ok, err := d.null(); ok || err != nil {
		return err
	}
	if d.peek() != '[' {
		return d.shape("an array")
	}
	d.pos++
	if d.depth++; d.depth > maxDepth {
		return d.syntax("exceeded max depth")
	}
	if d.peek() == ']' {
		d.pos++
		d.depth--
		return nil
	}
	for i := 0; ; i++ {
		d.path = append(d.path, step{index: i})
		if err := elem(); err != nil {
			return err
		}
		d.path = d.path[:len(d.path)-1]
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return nil
		default:
			return d.unexpected("after array element")
		}
	}
}

// strings decodes an array of strings; null yields nil, [] an empty list.
func (d *decoder) strings() ([]string, error) {
	if ok, err := d.null(); ok || err != nil {
		return nil, err
	}
	list := []string{}
	err := d.array(func() error {
		if d.peek() != '"' {
			return d.shape("a string")
		}
		// No interning: rules name the lists' grants by digest, and
		// hashing every grant to intern it costs more than it saves.
		s, err := d.str(false)
		list = append(list, s)
		return err
	})
	return list, err
}

// string decodes a string value (null yields "").
func (d *decoder) string() (string, error) {
	switch d.peek() {
	case '"':
		return d.str(false)
	case 'n':
		return "", d.literal("null")
	}
	return "", d.shape("a string")
}

// bool decodes true or false (null yields false).
func (d *decoder) bool() (bool, error) {
	switch d.peek() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return false, d.literal("null")
	}
	return false, d.shape("a boolean")
}

// int decodes an integer value (null yields 0).
func (d *decoder) int() (int, error) {
	c := d.peek()
	if c == 'n' {
		return 0, d.literal("null")
	}
	if c != '-' && (c < '0' || c > '9') {
		return 0, d.shape("an integer")
	}
	start := d.pos
	if err := d.number(); err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(string(d.data[start:d.pos]))
	if err != nil {
		return 0, &shapeError{offset: start, path: d.where(), msg: "expected an integer, found " + string(d.data[start:d.pos])}
	}
	return n, nil
}

// str decodes the string at the current position (which is '"'),
// interning it when intern is set.
//
// Strings are substrings of d.text where no escape needs decoding, so the
// common case allocates nothing; interning is keyed on the raw (escaped)
// text, so a grant repeated in the rules is decoded once.
func (d *decoder) str(intern bool) (string, error) {
	start := d.pos + 1
	end := d.closingQuote(start)
	if end < 0 {
		// Unterminated: let the decoding loop find the exact problem.
		b := d.scratch[:0]
		s, err := d.unescape(b, start)
		if err == nil {
			err = d.syntax("unexpected end of JSON input")
		}
		return s, err
	}
	raw := d.text[start:end]
	if intern {
		if s, ok := d.seen[raw]; ok {
			d.pos = end + 1
			return s, nil
		}
	}
	i := start
	for i < end && plain[d.data[i]] {
		i++
	}
	var s string
	if i == end {
		s = raw
		d.pos = end + 1
	} else {
		var err error
		b := append(d.scratch[:0], d.data[start:i]...)
		if s, err = d.unescape(b, i); err != nil {
			return "", err
		}
	}
	if intern {
		if d.seen == nil {
			d.seen = make(map[string]string, 256)
		}
		d.seen[raw] = s
	}
	return s, nil
}

// closingQuote returns the offset of the quote that ends the string
// starting at start, or -1.
// skipString checks a string as str does, without decoding it.
func (d *decoder) skipString() error {
	start := d.pos + 1
	end := d.closingQuote(start)
	if end >= 0 {
		ok := true
		for i := start; i < end && ok; i++ {
			switch c := d.data[i]; {
			case c < 0x20:
				ok = false
			case c == '\\':
				i++
				switch d.data[i] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				case 'u':
					for k := 1; k <= 4 && ok; k++ {
						ok = i+k < end && isHex(d.data[i+k])
					}
					i += 4
				default:
					ok = false
				}
			}
		}
		if ok {
			d.pos = end + 1
			return nil
		}
	}
	// Let str find and report the exact problem.
	_, err := d.str(false)
	return err
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (d *decoder) closingQuote(start int) int {
	for i := start; ; {
		k := strings.IndexByte(d.text[i:], '"')
		if k < 0 {
			return -1
		}
		j := i + k
		n := 0
		for p := j - 1; p >= start && d.data[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j
		}
		i = j + 1
	}
}

// plain marks the bytes that stand for themselves in a JSON string.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// unescape decodes the rest of a string from i, appending to b.
func (d *decoder) unescape(b []byte, i int) (string, error) {
	s, b, err := d.unescapeLoop(b, i)
	d.scratch = b[:0]
	return s, err
}

func (d *decoder) unescapeLoop(b []byte, i int) (string, []byte, error) {
	for {
		if i >= len(d.data) {
			d.pos = i
			return "", b, d.syntax("unexpected end of JSON input")
		}
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return string(b), b, nil
		case c < 0x20:
			d.pos = i
			return "", b, d.unexpected("in string literal")
		case c == '\\':
			i++
			if i >= len(d.data) {
				d.pos = i
				return "", b, d.syntax("unexpected end of JSON input")
			}
			switch e := d.data[i]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, bad := d.hex4(i + 1)
				if bad >= 0 {
					d.pos = bad
					return "", b, d.unexpected("in \\u hexadecimal character escape")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, bad2 := d.hex4(i + 3)
					if bad2 < 0 && i+2 < len(d.data) && d.data[i+1] == '\\' && d.data[i+2] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							i += 6
							b = utf8.AppendRune(b, dec)
							break
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				d.pos = i
				return "", b, d.unexpected("in string escape code")
			}
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(d.data[i:])
			b = utf8.AppendRune(b, r) // invalid UTF-8 becomes U+FFFD, as in encoding/json
			i += size
		}
	}
}

// hex4 decodes four hex digits at i; bad is the offset of the first
// byte that is not one, or -1.
func (d *decoder) hex4(i int) (r rune, bad int) {
	for k := range 4 {
		if i+k >= len(d.data) {
			return 0, i + k
		}
		c := d.data[i+k]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, i + k
		}
		r = r<<4 | rune(c)
	}
	return r, -1
}

// number validates a JSON number at the current position.
func (d *decoder) number() error {
	digits := func() bool {
		start := d.pos
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
		}
		return d.pos > start
	}
	if d.pos < len(d.data) && d.data[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(d.data) && d.data[d.pos] == '0':
		d.pos++
	case !digits():
		return d.unexpected("in numeric literal")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if !digits() {
			return d.unexpected("after decimal point in numeric literal")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if !digits() {
			return d.unexpected("in exponent of numeric literal")
		}
	}
	return nil
}

// skip validates and skips any value.
func (d *decoder) skip() error {
	switch c := d.peek(); {
	case c == '{':
		return d.object(func(string) error { return d.skip() })
	case c == '[':
		return d.array(d.skip)
	case c == '"':
		return d.skipString()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return d.unexpected("looking for beginning of value")
}

// document decodes the whole file into f.
func (d *decoder) document(f *File) error {
	if d.peek() != '{' {
		if err := d.skip(); err != nil {
			return err
		}
		d.pos = 0
		return d.shape("an object")
	}
	err := d.object(d.recording(&f.layout.top, func(key string) error {
		switch key {
		case "userSettings":
			if d.settingsOnly {
				return d.skip()
			}
			return d.userSettings(f)
		case "agentShim":
			f.Shim = Shim{}
			return d.shim(f)
		}
		return d.skip()
	}))
	if err != nil {
		return err
	}
	if d.ws(); d.pos < len(d.data) {
		return d.unexpected("after top-level value")
	}
	resolve(f, d.refs)
	return nil
}

// resolve appends to each rule the grants its digests name. A digest no
// list holds names a grant a person removed by hand: the rule no longer
// claims it, as if its text were listed but not in the lists.
func resolve(f *File, refs []ruleRefs) {
	if len(refs) == 0 {
		return
	}
	byDigest := make(map[[16]byte]string, len(f.Grants.Allow)+len(f.Grants.Ask)+len(f.Grants.Deny))
	for _, list := range [][]string{f.Grants.Allow, f.Grants.Ask, f.Grants.Deny} {
		for _, g := range list {
			// statefile.Digest without its copies: the grant's bytes
			// are hashed in place, the digest kept binary.
			sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(g), len(g)))
			byDigest[[16]byte(sum[:16])] = g
		}
	}
	for _, ref := range refs {
		r := &f.Shim.Rules[ref.rule]
		for _, dg := range ref.digests {
			var key [16]byte
			if len(dg) != 2*len(key) {
				continue
			}
			if _, err := hex.Decode(key[:], unsafe.Slice(unsafe.StringData(dg), len(dg))); err != nil {
				continue
			}
			if g, ok := byDigest[key]; ok && !slices.Contains(r.Grants, g) {
				r.Grants = append(r.Grants, g)
			}
		}
	}
}

// recording wraps an object's member callback to record where each
// member's value lies, for Marshal.
func (d *decoder) recording(spans *[]span, member func(key string) error) func(key string) error {
	*spans = nil
	return func(key string) error {
		d.ws()
		start := d.pos
		if err := member(key); err != nil {
			return err
		}
		*spans = append(*spans, span{key, start, d.pos})
		return nil
	}
}

func (d *decoder) userSettings(f *File) error {
	return d.object(d.recording(&f.layout.user, func(key string) error {
		if key != "globalPermissionGrants" {
			return d.skip()
		}
		f.Grants = Grants{}
		return d.object(d.recording(&f.layout.grants, func(key string) error {
			var err error
			switch key {
			case "allow":
				f.Grants.Allow, err = d.strings()
			case "ask":
				f.Grants.Ask, err = d.strings()
			case "deny":
				f.Grants.Deny, err = d.strings()
			default:
				err = d.skip()
			}
			return err
		}))
	}))
}

func (d *decoder) shim(f *File) error {
	s := &f.Shim
	return d.object(d.recording(&f.layout.shim, func(key string) error {
		var err error
		switch key {
		case "version":
			d.ws()
			start := d.pos
			if s.Version, err = d.int(); err == nil && s.Version > Version {
				err = &shapeError{offset: start, path: d.where(),
					msg: fmt.Sprintf("version %d is written by a newer agents-setup; this one reads up to %d", s.Version, Version)}
			}
		case "profile":
			s.Profile, err = d.string()
		case "mode":
			s.Mode, err = d.string()
		case "shell":
			s.Shell, err = d.string()
		case "runtime":
			s.Runtime, err = d.string()
		case "requireHook":
			s.RequireHook, err = d.bool()
		case "rules":
			s.Rules = nil
			if d.settingsOnly {
				return d.skip()
			}
			d.refs = nil
			err = d.array(func() error {
				return d.rule(func(r Rule, digests []string) {
					if digests != nil {
						d.refs = append(d.refs, ruleRefs{len(s.Rules), digests})
					}
					s.Rules = append(s.Rules, r)
				})
			})
		case "programs":
			s.Programs = nil
			if d.settingsOnly {
				return d.skip()
			}
			err = d.array(func() error {
				var pf ProgramFile
				err := d.object(func(key string) error {
					var err error
					switch key {
					case "file":
						pf.File, err = d.string()
					case "text":
						pf.Text, err = d.string()
					default:
						err = d.skip()
					}
					return err
				})
				s.Programs = append(s.Programs, pf)
				return err
			})
		case "pathScope":
			s.PathScope = PathScope{}
			err = d.object(func(key string) error {
				if key != "allow" {
					return d.skip()
				}
				var err error
				s.PathScope.Allow, err = d.strings()
				return err
			})
		case "secrets":
			s.Secrets, err = d.strings()
		case "tools":
			s.Tools = Tools{}
			err = d.object(func(key string) error {
				var err error
				switch key {
				case "allow":
					s.Tools.Allow, err = d.strings()
				case "deny":
					s.Tools.Deny, err = d.strings()
				default:
					err = d.skip()
				}
				return err
			})
		default:
			err = d.skip()
		}
		return err
	}))
}

// rule reads one element of agentShim.rules and adds what it holds: a
// rule ({"line": …, "category": …, "source": {…}, "digests"|"grants":
// […]}), or a group of the rules of one manifest file, which names the
// file, overlay and category once ({"file": …, "overlay": …, "category":
// …, "lines": [[line, text, digest…], …]}).
func (d *decoder) rule(add func(Rule, []string)) error {
	d.ws()
	start := d.pos
	var r Rule
	var digests []string
	hasLine, group := false, false
	var lines []groupLine
	err := d.object(func(key string) error {
		var err error
		switch key {
		case "line":
			hasLine = true
			r.Line, err = d.string()
		case "category":
			r.Category, err = d.string()
		case "grants":
			r.Grants, err = d.strings()
		case "digests":
			digests, err = d.strings()
		case "file":
			r.Source.File, err = d.string()
		case "overlay":
			r.Source.Overlay, err = d.string()
		case "lines":
			group = true
			lines, err = d.groupLines()
		case "source":
			err = d.object(func(key string) error {
				var err error
				switch key {
				case "overlay":
					r.Source.Overlay, err = d.string()
				case "file":
					r.Source.File, err = d.string()
				case "line":
					r.Source.Line, err = d.int()
				default:
					err = d.skip()
				}
				return err
			})
		default:
			err = d.skip()
		}
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case group && hasLine:
		return &shapeError{offset: start, path: d.where(), msg: `both "line" and "lines"`}
	case group:
		for _, l := range lines {
			rule := Rule{Line: l.text, Category: r.Category, Source: Source{Overlay: r.Source.Overlay, File: r.Source.File, Line: l.num}}
			add(rule, l.digests)
		}
		return nil
	case !hasLine || r.Line == "":
		return &shapeError{offset: start, path: d.where(), msg: `missing "line"`}
	}
	add(r, digests)
	return nil
}

// groupLine is one rule of a group: [line, text, digest…].
type groupLine struct {
	num     int
	text    string
	digests []string
}

// groupLines reads a group's "lines".
func (d *decoder) groupLines() ([]groupLine, error) {
	var out []groupLine
	err := d.array(func() error {
		d.ws()
		start := d.pos
		var l groupLine
		n := 0
		err := d.array(func() error {
			var err error
			switch n {
			case 0:
				l.num, err = d.int()
			case 1:
				l.text, err = d.string()
			default:
				var dg string
				dg, err = d.string()
				l.digests = append(l.digests, dg)
			}
			n++
			return err
		})
		if err != nil {
			return err
		}
		if n < 3 || l.text == "" {
			return &shapeError{offset: start, path: d.where(), msg: "a rule of a group is [line, text, digest…]"}
		}
		out = append(out, l)
		return nil
	})
	return out, err
}
