package fileedit

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// A TOML file is edited through a TOML parser (go-toml's), never by
// matching lines: the file is decoded before the edit, the edit splices
// the bytes of the expressions the parser located (so every comment, key
// order and spelling stays), and the result is decoded again and must
// equal the old document with exactly the intended change (Checked). An
// edit that cannot be made that way is refused with the lines a person
// should add (ErrInPlace); an invalid file is never written.

// Expr is one top-level expression of a TOML document: a table header or
// a key/value, with its full key path (the table's keys first).
type Expr struct {
	Kind unstable.Kind // unstable.Table, ArrayTable or KeyValue
	Path []string
	// Start is the offset of the expression's line, End the offset after
	// its last line's newline (or the end of the document).
	Start, End int
	// ValStart and ValEnd span a key/value's value (not an array or an
	// inline table: both 0 then).
	ValStart, ValEnd int
}

// TOML is a parsed TOML document: its decoded value and its expressions.
type TOML struct {
	Path  string
	Data  []byte
	Value map[string]any
	Exprs []Expr
}

// ParseTOML validates and scans a TOML document. Errors carry
// path:line:col.
func ParseTOML(path string, data []byte) (*TOML, error) {
	d := &TOML{Path: path, Data: data, Value: map[string]any{}}
	if err := toml.Unmarshal(data, &d.Value); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("%s:%d:%d: %s", path, row, col, de.Error())
		}
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	p := &unstable.Parser{}
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		var keys []string
		keyOff := -1
		it := e.Key()
		for it.Next() {
			n := it.Node()
			if keyOff < 0 {
				keyOff = int(n.Raw.Offset)
			}
			keys = append(keys, string(n.Data))
		}
		x := Expr{Kind: e.Kind}
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keys
			x.Path = slices.Clone(keys)
			x.Start, x.End = LineStart(data, keyOff), LineEnd(data, keyOff)
		case unstable.KeyValue:
			x.Path = append(slices.Clone(table), keys...)
			end := int(e.Raw.Offset + e.Raw.Length)
			x.Start, x.End = LineStart(data, int(e.Raw.Offset)), LineEnd(data, end)
			if v := e.Value(); v != nil && v.Kind != unstable.Array && v.Kind != unstable.InlineTable {
				x.ValStart, x.ValEnd = int(v.Raw.Offset), int(v.Raw.Offset+v.Raw.Length)
			}
		default:
			continue
		}
		d.Exprs = append(d.Exprs, x)
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return d, nil
}

// LineStart is the offset of the line holding off.
func LineStart(data []byte, off int) int { return bytes.LastIndexByte(data[:off], '\n') + 1 }

// LineEnd is the offset after the newline ending the line holding off
// (the end of data on the last line).
func LineEnd(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(data)
}

// Find returns the first expression of kind with exactly path, or nil.
func (d *TOML) Find(kind unstable.Kind, path ...string) *Expr {
	for i := range d.Exprs {
		if d.Exprs[i].Kind == kind && slices.Equal(d.Exprs[i].Path, path) {
			return &d.Exprs[i]
		}
	}
	return nil
}

// TopLevelUnder returns the last top-level key/value (one before any
// table header) whose path starts with prefix and is longer, or nil.
func (d *TOML) TopLevelUnder(prefix ...string) *Expr {
	var last *Expr
	for i := range d.Exprs {
		x := &d.Exprs[i]
		if x.Kind != unstable.KeyValue {
			break
		}
		if len(x.Path) > len(prefix) && slices.Equal(x.Path[:len(prefix)], prefix) {
			last = x
		}
	}
	return last
}

// Lookup returns the decoded value at path, if any.
func Lookup(m map[string]any, path ...string) (any, bool) {
	var v any = m
	for _, k := range path {
		t, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = t[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// WithValue returns a deep copy of m with path set to v (v nil: removed),
// tables on the way created; empty tables left by a removal go too.
func WithValue(m map[string]any, v any, path ...string) map[string]any {
	out := deepCopy(m).(map[string]any)
	var set func(t map[string]any, path []string) bool
	set = func(t map[string]any, path []string) bool {
		if len(path) == 1 {
			if v == nil {
				delete(t, path[0])
			} else {
				t[path[0]] = v
			}
			return len(t) == 0
		}
		sub, ok := t[path[0]].(map[string]any)
		if !ok {
			if v == nil {
				return false
			}
			sub = map[string]any{}
			t[path[0]] = sub
		}
		if set(sub, path[1:]) && v == nil {
			delete(t, path[0])
		}
		return len(t) == 0
	}
	set(out, path)
	return out
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = deepCopy(x)
		}
		return s
	}
	return v
}

// pruned drops empty tables, recursively: a table header left without
// keys by a removal is not a change a reader of the values can see.
func pruned(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, x := range m {
		x = pruned(x)
		if t, ok := x.(map[string]any); ok && len(t) == 0 {
			continue
		}
		out[k] = x
	}
	return out
}

// ErrInPlace marks an edit that cannot be made while keeping the file as
// it is; the error's message says what to add by hand.
var ErrInPlace = errors.New("cannot edit in place")

// inPlaceError is an ErrInPlace for one file.
type inPlaceError struct{ path, msg string }

func (e *inPlaceError) Error() string {
	return "cannot edit " + filepath.Base(e.path) + " in place: " + e.path + ": " + e.msg
}

func (e *inPlaceError) Is(target error) bool { return target == ErrInPlace }

// InPlaceError returns an ErrInPlace for path, saying msg.
func InPlaceError(path, msg string) error { return &inPlaceError{path, msg} }

// Checked returns data when it decodes to want (empty tables aside), and
// otherwise the refusal with the lines to add by hand.
func Checked(path string, data []byte, want map[string]any, lines string) ([]byte, error) {
	d, err := ParseTOML(path, data)
	if err == nil && reflect.DeepEqual(pruned(d.Value), pruned(want)) {
		return data, nil
	}
	return nil, InPlaceError(path, "add these lines yourself, then run the command again:\n"+lines)
}

// AppendBlock appends a block of lines after the last line of data, a
// blank line between.
func AppendBlock(data []byte, block string) []byte {
	out := slices.Clone(data)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	if len(bytes.TrimSpace(out)) > 0 {
		out = append(out, '\n')
	}
	return append(out, block...)
}

// Quote quotes s as a TOML basic string.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// DropEmptyTable removes the header of table path when no key/value
// follows it before the next header, with the blank line before it.
func DropEmptyTable(path string, data []byte, table ...string) ([]byte, error) {
	d, err := ParseTOML(path, data)
	if err != nil {
		return nil, err
	}
	for i, x := range d.Exprs {
		if x.Kind != unstable.Table || !slices.Equal(x.Path, table) {
			continue
		}
		if i+1 < len(d.Exprs) && d.Exprs[i+1].Kind == unstable.KeyValue {
			return data, nil
		}
		s := x.Start
		if s >= 2 && data[s-1] == '\n' && data[s-2] == '\n' {
			s--
		}
		return Splice(data, s, x.End, ""), nil
	}
	return data, nil
}
