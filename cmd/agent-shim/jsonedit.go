package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// An ordered, byte-preserving edit of a JSON document, for the agents'
// settings files: install and uninstall change one array or object member
// and leave every other byte as it was (keys, their order, spacing,
// number spellings). Values are located by a small scanner over a
// document encoding/json has already validated; each edit splices the
// bytes of one value, member or element, and the document is scanned
// again before the next.

// jval is one value of a document: its byte span, and for objects and
// arrays their members or elements.
type jval struct {
	start, end int
	kind       byte // '{', '[', '"' or 0 for other scalars
	members    []jmember
	elems      []*jval
}

// jmember is an object member; its span runs from the key to the value's end.
type jmember struct {
	key      string
	keyStart int
	val      *jval
}

func (m jmember) span() (int, int) { return m.keyStart, m.val.end }

// member returns the value of key in an object, or nil.
func (v *jval) member(key string) *jval {
	if v == nil || v.kind != '{' {
		return nil
	}
	for _, m := range v.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

func (v *jval) memberIndex(key string) int {
	for i, m := range v.members {
		if m.key == key {
			return i
		}
	}
	return -1
}

// parseDoc validates and scans a JSON document. Errors carry path:line:col.
func parseDoc(path string, data []byte) (*jval, error) {
	return scanDoc(path, data, data)
}

// parseDocComments is parseDoc for a document with // and /* */ comments,
// as Gemini CLI reads its settings (strip-json-comments, then JSON.parse:
// comments, no trailing commas). The comments are blanked out of a copy
// for the scan, offsets kept, so the spans found are those of data, and
// an edit keeps every comment outside what it replaces.
func parseDocComments(path string, data []byte) (*jval, error) {
	plain, err := blankComments(data)
	if err != nil {
		line, col := lineCol(data, len(data))
		return nil, fmt.Errorf("%s:%d:%d: %v", path, line, col, err)
	}
	return scanDoc(path, data, plain)
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

// scanDoc validates plain and scans it; data is the document as written
// (plain with its comments, or plain itself).
func scanDoc(path string, data, plain []byte) (*jval, error) {
	var x any
	if err := json.Unmarshal(plain, &x); err != nil {
		var se *json.SyntaxError
		off := len(data)
		if errors.As(err, &se) {
			off = int(se.Offset)
		}
		line, col := lineCol(data, off)
		return nil, fmt.Errorf("%s:%d:%d: %v", path, line, col, err)
	}
	s := &jscan{data: plain}
	s.ws()
	return s.value(), nil
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (int, int) {
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

type jscan struct {
	data []byte
	i    int
}

func (s *jscan) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *jscan) value() *jval {
	v := &jval{start: s.i}
	switch s.data[s.i] {
	case '{':
		v.kind = '{'
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
			v.members = append(v.members, jmember{key: key, keyStart: ks, val: s.value()})
			s.ws()
			if s.data[s.i] == ',' {
				s.i++
				s.ws()
			}
		}
		s.i++
	case '[':
		v.kind = '['
		s.i++
		s.ws()
		for s.data[s.i] != ']' {
			v.elems = append(v.elems, s.value())
			s.ws()
			if s.data[s.i] == ',' {
				s.i++
				s.ws()
			}
		}
		s.i++
	case '"':
		v.kind = '"'
		s.str()
	default:
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				v.end = s.i
				return v
			}
			s.i++
		}
	}
	v.end = s.i
	return v
}

func (s *jscan) str() {
	s.i++ // opening quote
	for s.data[s.i] != '"' {
		if s.data[s.i] == '\\' {
			s.i++
		}
		s.i++
	}
	s.i++
}

// splice replaces data[start:end] with text.
func splice(data []byte, start, end int, text string) []byte {
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
func indentUnit(data []byte, root *jval) string {
	var first int
	switch {
	case root.kind == '{' && len(root.members) > 0:
		first = root.members[0].keyStart
	case root.kind == '[' && len(root.elems) > 0:
		first = root.elems[0].start
	default:
		return "  "
	}
	if !bytes.Contains(data[root.start:first], []byte("\n")) {
		return ""
	}
	return lineIndent(data, first)[len(lineIndent(data, root.start)):]
}

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
func itemSpans(c *jval) [][2]int {
	var spans [][2]int
	for _, m := range c.members {
		s, e := m.span()
		spans = append(spans, [2]int{s, e})
	}
	for _, el := range c.elems {
		spans = append(spans, [2]int{el.start, el.end})
	}
	return spans
}

// appendItem adds an item at the end of object or array c: for an object,
// key and v make a member; for an array key is ignored.
func appendItem(data []byte, root, c *jval, key string, v any) ([]byte, error) {
	unit := indentUnit(data, root)
	spans := itemSpans(c)
	var ind string
	switch {
	case len(spans) > 0 && bytes.Contains(data[c.start:spans[0][0]], []byte("\n")):
		ind = lineIndent(data, spans[0][0])
		if unit == "" { // a block in a document otherwise on one line
			if unit = strings.TrimPrefix(ind, lineIndent(data, c.start)); unit == "" {
				unit = "  "
			}
		}
	case len(spans) > 0 || unit == "":
		unit = ""
	default:
		ind = lineIndent(data, c.start) + unit
	}
	text, err := encodeAt(v, ind, unit)
	if err != nil {
		return nil, err
	}
	if c.kind == '{' {
		k, err := encodeAt(key, "", "")
		if err != nil {
			return nil, err
		}
		text = k + ": " + text
	}
	if len(spans) == 0 {
		if unit == "" {
			return splice(data, c.start+1, c.end-1, text), nil
		}
		return splice(data, c.start+1, c.end-1, "\n"+ind+text+"\n"+lineIndent(data, c.start)), nil
	}
	last := spans[len(spans)-1][1]
	if unit == "" {
		return splice(data, last, last, ", "+text), nil
	}
	return splice(data, last, last, ",\n"+ind+text), nil
}

// removeItem removes item i of object or array c, with its comma.
func removeItem(data []byte, c *jval, i int) []byte {
	spans := itemSpans(c)
	switch {
	case len(spans) == 1:
		return splice(data, c.start+1, c.end-1, "")
	case i < len(spans)-1:
		return splice(data, spans[i][0], spans[i+1][0], "")
	default:
		return splice(data, spans[i-1][1], spans[i][1], "")
	}
}

// decoded returns the value of the bytes of v, for comparisons (comments
// inside it aside).
func decoded(data []byte, v *jval) any {
	var x any
	b := data[v.start:v.end]
	if json.Unmarshal(b, &x) != nil {
		if plain, err := blankComments(b); err == nil {
			json.Unmarshal(plain, &x)
		}
	}
	return x
}

// sameJSON reports whether the bytes of v encode the same value as x.
func sameJSON(data []byte, v *jval, x any) bool {
	b, err := json.Marshal(x)
	if err != nil {
		return false
	}
	var y any
	json.Unmarshal(b, &y)
	return reflect.DeepEqual(decoded(data, v), y)
}
