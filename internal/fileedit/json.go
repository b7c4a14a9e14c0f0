// Package fileedit edits the agents' settings files in place: JSON (with
// or without comments) and TOML. An edit changes one value, member or
// element and leaves every other byte as it was — keys, their order,
// spacing, comments, number spellings — so that a person's file stays
// theirs. A file is validated before an edit (one the agent could not read
// is not touched) and the result is parsed again; errors carry
// path:line:col.
package fileedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// A JSON document is located by a small scanner over bytes encoding/json
// has already validated; each edit splices the bytes of one value, member
// or element, and the document is scanned again before the next.

// Value is one value of a JSON document: its byte span, and for objects
// and arrays their members or elements.
type Value struct {
	Start, End int
	Kind       byte // '{', '[', '"' or 0 for other scalars
	Members    []Member
	Elems      []*Value
}

// Member is an object member; its span runs from the key to the value's end.
type Member struct {
	Key      string
	KeyStart int
	Val      *Value
}

func (m Member) span() (int, int) { return m.KeyStart, m.Val.End }

// Member returns the value of key in an object, or nil (also for a nil
// or non-object v).
func (v *Value) Member(key string) *Value {
	if v == nil || v.Kind != '{' {
		return nil
	}
	for _, m := range v.Members {
		if m.Key == key {
			return m.Val
		}
	}
	return nil
}

// MemberIndex returns the index of key in an object's members, or -1.
func (v *Value) MemberIndex(key string) int {
	for i, m := range v.Members {
		if m.Key == key {
			return i
		}
	}
	return -1
}

// ParseJSON validates and scans a JSON document. A document with an
// object that holds one key twice is refused, naming both places:
// encoding/json and the agents read the last of the two, an editor that
// changed the first would change nothing the agent reads.
func ParseJSON(path string, data []byte) (*Value, error) {
	return scan(path, data, data)
}

// ParseJSONC is ParseJSON for a document with // and /* */ comments, as
// Gemini CLI reads its settings (strip-json-comments, then JSON.parse:
// comments, no trailing commas). The comments are blanked out of a copy
// for the scan, offsets kept, so the spans found are those of data, and
// an edit keeps every comment outside what it replaces.
func ParseJSONC(path string, data []byte) (*Value, error) {
	plain, err := blankComments(data)
	if err != nil {
		line, col := LineCol(data, len(data))
		return nil, fmt.Errorf("%s:%d:%d: %v", path, line, col, err)
	}
	return scan(path, data, plain)
}

// blankComments returns data with each comment replaced by spaces (its
// newlines kept).
func blankComments(data []byte) ([]byte, error) {
	out := bytes.Clone(data)
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == '"':
			for i++; i < len(out) && out[i] != '"'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				return nil, errors.New("unterminated /* comment")
			}
			for j := i; j < i+2+end+2; j++ {
				if out[j] != '\n' {
					out[j] = ' '
				}
			}
			i += 2 + end + 1
		}
	}
	return out, nil
}

// ErrDuplicateKey marks a document with an object that holds one key
// twice.
var ErrDuplicateKey = errors.New("duplicate key")

// scan validates plain and scans it; data is the document as written
// (plain with its comments, or plain itself).
func scan(path string, data, plain []byte) (*Value, error) {
	var x any
	if err := json.Unmarshal(plain, &x); err != nil {
		var se *json.SyntaxError
		off := len(data)
		if errors.As(err, &se) {
			off = int(se.Offset)
		}
		line, col := LineCol(data, off)
		return nil, fmt.Errorf("%s:%d:%d: %v", path, line, col, err)
	}
	s := &scanner{data: plain}
	s.ws()
	v := s.value()
	if s.dup != nil {
		line, col := LineCol(data, s.dup.KeyStart)
		first, _ := LineCol(data, s.first)
		return nil, fmt.Errorf("%s:%d:%d: %w %q (first at line %d): the agent reads only the last; remove one of them",
			path, line, col, ErrDuplicateKey, s.dup.Key, first)
	}
	return v, nil
}

// LineCol turns a byte offset into a 1-based line and column.
func LineCol(data []byte, off int) (int, int) {
	if off > len(data) {
		off = len(data)
	}
	if off > 0 && off == len(data) {
		off-- // the error is at the end: point at the last byte
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

type scanner struct {
	data []byte
	i    int
	// dup is the first member found whose key its object already has,
	// first where that key was before.
	dup   *Member
	first int
}

func (s *scanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) value() *Value {
	v := &Value{Start: s.i}
	switch s.data[s.i] {
	case '{':
		v.Kind = '{'
		s.i++
		s.ws()
		for s.data[s.i] != '}' {
			ks := s.i
			s.str()
			var key string
			json.Unmarshal(s.data[ks:s.i], &key)
			s.ws()
			s.i++ // ':'
			s.ws()
			m := Member{Key: key, KeyStart: ks, Val: s.value()}
			if i := v.MemberIndex(key); i >= 0 && s.dup == nil {
				s.dup, s.first = &m, v.Members[i].KeyStart
			}
			v.Members = append(v.Members, m)
			s.ws()
			if s.data[s.i] == ',' {
				s.i++
				s.ws()
			}
		}
		s.i++
	case '[':
		v.Kind = '['
		s.i++
		s.ws()
		for s.data[s.i] != ']' {
			v.Elems = append(v.Elems, s.value())
			s.ws()
			if s.data[s.i] == ',' {
				s.i++
				s.ws()
			}
		}
		s.i++
	case '"':
		v.Kind = '"'
		s.str()
	default:
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				v.End = s.i
				return v
			}
			s.i++
		}
	}
	v.End = s.i
	return v
}

func (s *scanner) str() {
	s.i++ // opening quote
	for s.data[s.i] != '"' {
		if s.data[s.i] == '\\' {
			s.i++
		}
		s.i++
	}
	s.i++
}

// Splice replaces data[start:end] with text.
func Splice(data []byte, start, end int, text string) []byte {
	out := make([]byte, 0, len(data)-(end-start)+len(text))
	out = append(out, data[:start]...)
	out = append(out, text...)
	return append(out, data[end:]...)
}

// lineIndent returns the blanks that start the line holding pos.
func lineIndent(data []byte, pos int) string {
	ls := bytes.LastIndexByte(data[:pos], '\n') + 1
	e := ls
	for e < len(data) && (data[e] == ' ' || data[e] == '\t') {
		e++
	}
	return string(data[ls:e])
}

// indentUnit guesses the document's indentation step from its first
// member or element on a line of its own: "" for a document on one line.
func indentUnit(data []byte, root *Value) string {
	var first int
	switch {
	case root.Kind == '{' && len(root.Members) > 0:
		first = root.Members[0].KeyStart
	case root.Kind == '[' && len(root.Elems) > 0:
		first = root.Elems[0].Start
	default:
		return "  "
	}
	if !bytes.Contains(data[root.Start:first], []byte("\n")) {
		return ""
	}
	return lineIndent(data, first)[len(lineIndent(data, root.Start)):]
}

// Encode encodes v as JSON on one line, a space after each comma and
// colon, without escaping <, > and &.
func Encode(v any) (string, error) { return encodeAt(v, "", "") }

// encodeAt encodes v as it would sit at indentation ind with step unit
// (compact when unit is ""), without escaping <, > and &.
func encodeAt(v any, ind, unit string) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if unit != "" {
		enc.SetIndent(ind, unit)
	}
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if unit == "" {
		out = spaced(out)
	}
	return string(out), nil
}

// spaced puts a space after each comma and colon outside strings, the
// way people write JSON on one line.
func spaced(b []byte) []byte {
	var out []byte
	in, esc := false, false
	for _, c := range b {
		out = append(out, c)
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ',' || c == ':'):
			out = append(out, ' ')
		}
	}
	return out
}

// itemSpans lists the spans of an object's members or an array's elements.
func itemSpans(c *Value) [][2]int {
	var spans [][2]int
	for _, m := range c.Members {
		s, e := m.span()
		spans = append(spans, [2]int{s, e})
	}
	for _, el := range c.Elems {
		spans = append(spans, [2]int{el.Start, el.End})
	}
	return spans
}

// Append adds an item at the end of object or array c of the document
// root: for an object, key and v make a member; for an array key is
// ignored. The item is indented as its neighbours are.
func Append(data []byte, root, c *Value, key string, v any) ([]byte, error) {
	unit := indentUnit(data, root)
	spans := itemSpans(c)
	var ind string
	switch {
	case len(spans) > 0 && bytes.Contains(data[c.Start:spans[0][0]], []byte("\n")):
		ind = lineIndent(data, spans[0][0])
		if unit == "" { // a block in a document otherwise on one line
			if unit = strings.TrimPrefix(ind, lineIndent(data, c.Start)); unit == "" {
				unit = "  "
			}
		}
	case len(spans) > 0 || unit == "":
		unit = ""
	default:
		ind = lineIndent(data, c.Start) + unit
	}
	text, err := encodeAt(v, ind, unit)
	if err != nil {
		return nil, err
	}
	if c.Kind == '{' {
		k, err := encodeAt(key, "", "")
		if err != nil {
			return nil, err
		}
		text = k + ": " + text
	}
	if len(spans) == 0 {
		if unit == "" {
			return Splice(data, c.Start+1, c.End-1, text), nil
		}
		return Splice(data, c.Start+1, c.End-1, "\n"+ind+text+"\n"+lineIndent(data, c.Start)), nil
	}
	last := spans[len(spans)-1][1]
	if unit == "" {
		return Splice(data, last, last, ", "+text), nil
	}
	return Splice(data, last, last, ",\n"+ind+text), nil
}

// Remove removes item i of object or array c, with its comma.
func Remove(data []byte, c *Value, i int) []byte {
	spans := itemSpans(c)
	switch {
	case len(spans) == 1:
		return Splice(data, c.Start+1, c.End-1, "")
	case i < len(spans)-1:
		return Splice(data, spans[i][0], spans[i+1][0], "")
	default:
		return Splice(data, spans[i-1][1], spans[i][1], "")
	}
}

// Decoded returns the value of the bytes of v, for comparisons (comments
// inside it aside).
func Decoded(data []byte, v *Value) any {
	var x any
	b := data[v.Start:v.End]
	if json.Unmarshal(b, &x) != nil {
		if plain, err := blankComments(b); err == nil {
			json.Unmarshal(plain, &x)
		}
	}
	return x
}

// String returns the string v holds, or "" when it holds none.
func String(data []byte, v *Value) string {
	s, _ := Decoded(data, v).(string)
	return s
}

// Same reports whether the bytes of v encode the same value as x.
func Same(data []byte, v *Value, x any) bool {
	b, err := json.Marshal(x)
	if err != nil {
		return false
	}
	var y any
	json.Unmarshal(b, &y)
	return reflect.DeepEqual(Decoded(data, v), y)
}

// AppendAll adds scalar items (strings, numbers, booleans) at the end of
// array c of the document root, as that many Appends would, in one pass:
// the first is placed by Append, the others after it with the same
// separator and indentation.
func AppendAll(data []byte, root, c *Value, items []any) ([]byte, error) {
	if len(items) == 0 {
		return data, nil
	}
	end := c.End // the array's ']' moves only by what Append inserts before it
	out, err := Append(data, root, c, "", items[0])
	if err != nil {
		return nil, err
	}
	closing := end - 1 + len(out) - len(data) // where ']' is now
	if len(items) == 1 {
		return out, nil
	}
	// The last element now ends where the text before ']' (a newline and
	// the array's indentation, when it is laid out on lines) begins.
	last := closing
	for last > 0 && (out[last-1] == ' ' || out[last-1] == '\t' || out[last-1] == '\n' || out[last-1] == '\r') {
		last--
	}
	sep := ", "
	if bytes.Contains(out[c.Start:last], []byte("\n")) {
		sep = ",\n" + lineIndent(out, last)
	}
	var b strings.Builder
	for _, it := range items[1:] {
		switch it.(type) {
		case map[string]any, []any:
			return nil, fmt.Errorf("AppendAll appends scalars, not %T", it)
		}
		text, err := encodeAt(it, "", "")
		if err != nil {
			return nil, err
		}
		b.WriteString(sep)
		b.WriteString(text)
	}
	return Splice(out, last, last, b.String()), nil
}

// RemoveAll removes the items of object or array c at the sorted indexes
// idx, as that many Removes would, in one pass.
func RemoveAll(data []byte, c *Value, idx []int) []byte {
	spans := itemSpans(c)
	n := len(spans)
	if len(idx) == 0 {
		return data
	}
	if len(idx) == n {
		return Splice(data, c.Start+1, c.End-1, "")
	}
	drop := make([]bool, n)
	for _, i := range idx {
		drop[i] = true
	}
	// Runs of removed items, from the end: a run with an item kept after
	// it goes with the separators up to that item; the run at the end
	// goes with the separator before it.
	for b := n - 1; b >= 0; {
		if !drop[b] {
			b--
			continue
		}
		a := b
		for a > 0 && drop[a-1] {
			a--
		}
		if b < n-1 {
			data = Splice(data, spans[a][0], spans[b+1][0], "")
		} else {
			data = Splice(data, spans[a-1][1], spans[b][1], "")
		}
		b = a - 1
	}
	return data
}
