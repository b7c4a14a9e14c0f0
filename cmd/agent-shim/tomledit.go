package main

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex's config.toml is edited through a TOML parser (go-toml's), never
// by matching lines: the file is decoded before the edit (a file Codex
// could not read is not touched), the edit splices the bytes of the
// expressions the parser located (so every comment, key order and
// spelling stays), and the result is decoded again and must equal the
// old document with exactly the intended change. An edit that cannot be
// made that way — `features` written as an inline table, a `hooks` that
// is not a table — is refused with the lines a person should add; an
// invalid file is never written.

// tomlExpr is one top-level expression of a TOML document: a table
// header or a key/value, with its full key path (the table's keys first).
type tomlExpr struct {
	kind unstable.Kind // unstable.Table, ArrayTable or KeyValue
	path []string
	// start is the offset of the expression's line, end the offset after
	// its last line's newline (or the end of the document).
	start, end int
	// valStart and valEnd span a key/value's value.
	valStart, valEnd int
}

// tomlDoc is a parsed config.toml: its decoded value and its expressions.
type tomlDoc struct {
	path  string
	data  []byte
	value map[string]any
	exprs []tomlExpr
}

// parseTOML validates and scans a TOML document. Errors carry path:line:col.
func parseTOML(path string, data []byte) (*tomlDoc, error) {
	d := &tomlDoc{path: path, data: data, value: map[string]any{}}
	if err := toml.Unmarshal(data, &d.value); err != nil {
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
		var keyOff int = -1
		it := e.Key()
		for it.Next() {
			n := it.Node()
			if keyOff < 0 {
				keyOff = int(n.Raw.Offset)
			}
			keys = append(keys, string(n.Data))
		}
		x := tomlExpr{kind: e.Kind}
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keys
			x.path = slices.Clone(keys)
			x.start, x.end = lineStart(data, keyOff), lineEnd(data, keyOff)
		case unstable.KeyValue:
			x.path = append(slices.Clone(table), keys...)
			end := int(e.Raw.Offset + e.Raw.Length)
			x.start, x.end = lineStart(data, int(e.Raw.Offset)), lineEnd(data, end)
			if v := e.Value(); v != nil && v.Kind != unstable.Array && v.Kind != unstable.InlineTable {
				x.valStart, x.valEnd = int(v.Raw.Offset), int(v.Raw.Offset+v.Raw.Length)
			}
		default:
			continue
		}
		d.exprs = append(d.exprs, x)
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return d, nil
}

func lineStart(data []byte, off int) int { return bytes.LastIndexByte(data[:off], '\n') + 1 }

func lineEnd(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(data)
}

// find returns the first expression of kind with exactly path, or nil.
func (d *tomlDoc) find(kind unstable.Kind, path ...string) *tomlExpr {
	for i := range d.exprs {
		if d.exprs[i].kind == kind && slices.Equal(d.exprs[i].path, path) {
			return &d.exprs[i]
		}
	}
	return nil
}

// lookup returns the decoded value at path, if any.
func lookup(m map[string]any, path ...string) (any, bool) {
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

// withValue returns a deep copy of m with path set to v (v nil: removed),
// tables on the way created; empty tables left by a removal go too.
func withValue(m map[string]any, v any, path ...string) map[string]any {
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

// errTOMLEdit marks an edit that cannot be made while keeping the file as
// it is; its message says what to add by hand.
var errTOMLEdit = errors.New("cannot edit config.toml in place")

// checked returns data when it decodes to want (empty tables aside), and
// otherwise the refusal with the lines to add by hand.
func checked(path string, data []byte, want map[string]any, lines string) ([]byte, error) {
	d, err := parseTOML(path, data)
	if err == nil && reflect.DeepEqual(pruned(d.value), pruned(want)) {
		return data, nil
	}
	return nil, fmt.Errorf("%w: %s: add these lines yourself, then run the command again:\n%s", errTOMLEdit, path, lines)
}

// appendBlock appends a block of lines after the last line of data, a
// blank line between.
func appendBlock(data []byte, block string) []byte {
	out := slices.Clone(data)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	if len(bytes.TrimSpace(out)) > 0 {
		out = append(out, '\n')
	}
	return append(out, block...)
}

// tomlQuote quotes s as a TOML basic string.
func tomlQuote(s string) string {
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

// setFeatureHooks makes features.hooks true. It returns the new text,
// the previous value's text when it replaced one ("" when it added the
// key), and whether it added a [features] table; data is returned
// unchanged when the flag is already on.
func setFeatureHooks(path string, data []byte) (out []byte, prev string, tableAdded bool, err error) {
	d, err := parseTOML(path, data)
	if err != nil {
		return nil, "", false, err
	}
	if v, _ := lookup(d.value, "features", "hooks"); v == true {
		return data, "", false, nil
	}
	want := withValue(d.value, true, "features", "hooks")
	lines := "  [features]\n  hooks = true\n"
	if x := d.find(unstable.KeyValue, "features", "hooks"); x != nil && x.valEnd > 0 {
		prev = string(data[x.valStart:x.valEnd])
		out = splice(data, x.valStart, x.valEnd, "true")
	} else if x := d.find(unstable.Table, "features"); x != nil {
		out = splice(data, x.end, x.end, "hooks = true\n")
		if x.end == len(data) && !bytes.HasSuffix(data, []byte("\n")) {
			out = splice(data, x.end, x.end, "\nhooks = true\n")
		}
	} else if x := d.topLevelUnder("features"); x != nil {
		// features.x = … in the top-level table: one more dotted key
		// beside them (a [features] table would define it twice).
		lines = "  features.hooks = true   (beside the other features.* keys)\n"
		ins := "features.hooks = true\n"
		if x.end == len(data) && !bytes.HasSuffix(data, []byte("\n")) {
			ins = "\n" + ins
		}
		out = splice(data, x.end, x.end, ins)
	} else if d.find(unstable.KeyValue, "features") == nil {
		// No features, or only [features.x] tables: a [features] header
		// at the end defines it.
		out, tableAdded = appendBlock(data, "[features]\nhooks = true\n"), true
	} else {
		return nil, "", false, fmt.Errorf("%w: %s: features is not a table agent-shim can add a key to; add hooks = true to it yourself, then run the command again", errTOMLEdit, path)
	}
	out, err = checked(path, out, want, lines)
	return out, prev, tableAdded, err
}

// topLevelUnder returns the last top-level key/value (one before any
// table header) whose path starts with prefix and is longer, or nil.
func (d *tomlDoc) topLevelUnder(prefix ...string) *tomlExpr {
	var last *tomlExpr
	for i := range d.exprs {
		x := &d.exprs[i]
		if x.kind != unstable.KeyValue {
			break
		}
		if len(x.path) > len(prefix) && slices.Equal(x.path[:len(prefix)], prefix) {
			last = x
		}
	}
	return last
}

// unsetFeatureHooks undoes setFeatureHooks: the value goes back to prev,
// or the key goes (and the [features] table with it when the key was its
// only one and install added it).
func unsetFeatureHooks(path string, data []byte, prev string, tableAdded bool) ([]byte, error) {
	d, err := parseTOML(path, data)
	if err != nil {
		return nil, err
	}
	x := d.find(unstable.KeyValue, "features", "hooks")
	if x == nil || x.valEnd == 0 || string(data[x.valStart:x.valEnd]) != "true" {
		return data, nil // not ours any more
	}
	if prev != "" {
		pv, err := parseTOML(path, []byte("x = "+prev+"\n"))
		if err != nil {
			return nil, err
		}
		return checked(path, splice(data, x.valStart, x.valEnd, prev), withValue(d.value, pv.value["x"], "features", "hooks"), "  [features]\n  hooks = "+prev+"\n")
	}
	out := splice(data, x.start, x.end, "")
	want := withValue(d.value, nil, "features", "hooks")
	if tableAdded {
		// The table install added, now empty, goes too.
		if out, err = dropEmptyTable(path, out, "features"); err != nil {
			return nil, err
		}
	}
	return checked(path, out, want, "  (remove hooks = true from [features])\n")
}

// setTrust writes trusted_hash for a Codex hook key, as Codex's /hooks
// does: [hooks.state."<key>"] trusted_hash = "sha256:…". It returns the
// new text and the value it replaced ("" when none).
func setTrust(path string, data []byte, key, hash string) (out []byte, prev string, err error) {
	d, err := parseTOML(path, data)
	if err != nil {
		return nil, "", err
	}
	if v, _ := lookup(d.value, "hooks", "state", key, "trusted_hash"); v == hash {
		return data, "", nil
	}
	want := withValue(d.value, hash, "hooks", "state", key, "trusted_hash")
	header := "[hooks.state." + tomlQuote(key) + "]\n"
	kv := "trusted_hash = " + tomlQuote(hash) + "\n"
	lines := "  " + header + "  " + kv
	if x := d.find(unstable.KeyValue, "hooks", "state", key, "trusted_hash"); x != nil && x.valEnd > 0 {
		prev = string(data[x.valStart:x.valEnd])
		out = splice(data, x.valStart, x.valEnd, tomlQuote(hash))
	} else if x := d.find(unstable.Table, "hooks", "state", key); x != nil {
		ins := kv
		if x.end == len(data) && !bytes.HasSuffix(data, []byte("\n")) {
			ins = "\n" + ins
		}
		out = splice(data, x.end, x.end, ins)
	} else {
		out = appendBlock(data, header+kv)
	}
	out, err = checked(path, out, want, lines)
	return out, prev, err
}

// unsetTrust removes the trust entry setTrust wrote for key (or puts prev
// back), and the table when nothing else is in it.
func unsetTrust(path string, data []byte, key, hash, prev string) ([]byte, error) {
	d, err := parseTOML(path, data)
	if err != nil {
		return nil, err
	}
	x := d.find(unstable.KeyValue, "hooks", "state", key, "trusted_hash")
	if v, _ := lookup(d.value, "hooks", "state", key, "trusted_hash"); x == nil || x.valEnd == 0 || v != hash {
		return data, nil // not ours any more
	}
	if prev != "" {
		pv, err := strconv.Unquote(prev)
		if err != nil {
			pv = strings.Trim(prev, `'"`)
		}
		return checked(path, splice(data, x.valStart, x.valEnd, prev), withValue(d.value, pv, "hooks", "state", key, "trusted_hash"), "  trusted_hash = "+prev+"\n")
	}
	out := splice(data, x.start, x.end, "")
	want := withValue(d.value, nil, "hooks", "state", key, "trusted_hash")
	if out, err = dropEmptyTable(path, out, "hooks", "state", key); err != nil {
		return nil, err
	}
	return checked(path, out, want, "  (remove the [hooks.state."+tomlQuote(key)+"] table)\n")
}

// codexFeature returns config.toml's features.<name> when it is a bool.
func codexFeature(v map[string]any, name string) (val, set bool) {
	x, ok := lookup(v, "features", name)
	b, isBool := x.(bool)
	return b, ok && isBool
}

// dropEmptyTable removes the header of table path when no key/value
// follows it before the next header, with the blank line before it.
func dropEmptyTable(path string, data []byte, table ...string) ([]byte, error) {
	d, err := parseTOML(path, data)
	if err != nil {
		return nil, err
	}
	for i, x := range d.exprs {
		if x.kind != unstable.Table || !slices.Equal(x.path, table) {
			continue
		}
		if i+1 < len(d.exprs) && d.exprs[i+1].kind == unstable.KeyValue {
			return data, nil
		}
		s := x.start
		if s >= 2 && data[s-1] == '\n' && data[s-2] == '\n' {
			s--
		}
		return splice(data, s, x.end, ""), nil
	}
	return data, nil
}
