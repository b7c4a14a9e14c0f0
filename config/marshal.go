package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// member is one key of a JSON object with its undecoded value.
type member struct {
	key   string
	value json.RawMessage
}

// object is a JSON object as an ordered list of members, so that writing
// it back keeps the order of its keys.
type object []member

// parseObject decodes raw (a JSON object, or null, or nothing) into its
// members. what names the object in errors.
func parseObject(raw []byte, what string) (object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("%s: not an object", what)
	}
	var obj object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("%s: object key is not a string", what)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", what, key, err)
		}
		obj = append(obj, member{key, value})
	}
	return obj, nil
}

// get returns the value of key: the last one, as encoding/json decodes
// duplicate keys.
func (o object) get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			return o[i].value, true
		}
	}
	return nil, false
}

// set replaces the value of key in place, dropping duplicates of it, or
// appends the key when the object does not have it.
func (o object) set(key string, value json.RawMessage) object {
	found := false
	out := o[:0:0]
	for _, m := range o {
		if m.key != key {
			out = append(out, m)
			continue
		}
		if !found {
			out = append(out, member{key, value})
			found = true
		}
	}
	if !found {
		out = append(out, member{key, value})
	}
	return out
}

// encode writes the object compactly; Marshal indents the whole document.
func (o object) encode() (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, err := encode(m.key)
		if err != nil {
			return nil, err
		}
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(m.value)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// encode marshals v without escaping <, > and & (grants are regular
// expressions that people read).
func encode(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// nonNil makes a nil list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Marshal returns the file's content with the current grants and shim
// section: every key this package does not own, and the order of keys at
// every level, is kept; new keys go last. The output is indented with two
// spaces and ends in a newline.
func (f *File) Marshal() ([]byte, error) {
	top, err := parseObject(f.raw, "top level")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
	}
	userRaw, _ := top.get("userSettings")
	user, err := parseObject(userRaw, "userSettings")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
	}
	grantsRaw, _ := user.get("globalPermissionGrants")
	grants, err := parseObject(grantsRaw, "userSettings.globalPermissionGrants")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
	}
	for _, l := range []struct {
		key  string
		list []string
	}{{"allow", f.Grants.Allow}, {"ask", f.Grants.Ask}, {"deny", f.Grants.Deny}} {
		v, err := encode(nonNil(l.list))
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
		}
		grants = grants.set(l.key, v)
	}
	v, err := grants.encode()
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
	}
	user = user.set("globalPermissionGrants", v)
	if v, err = user.encode(); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
	}
	top = top.set("userSettings", v)

	shimRaw, hasShim := top.get("agentShim")
	if hasShim || !reflect.DeepEqual(f.Shim, Shim{}) {
		shim, err := f.encodeShim(shimRaw)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
		}
		top = top.set("agentShim", shim)
	}

	compact, err := top.encode()
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// encodeShim writes the shim's section over its previous content raw.
// version, profile and rules are always written; the user's keys only when
// they were changed in memory, so an untouched value keeps its exact form.
func (f *File) encodeShim(raw json.RawMessage) (json.RawMessage, error) {
	shim, err := parseObject(raw, "agentShim")
	if err != nil {
		return nil, err
	}
	version := f.Shim.Version
	if version == 0 {
		version = Version
	}
	fields := []struct {
		key     string
		value   any
		changed bool
	}{
		{"version", version, true},
		{"profile", f.Shim.Profile, true},
		{"rules", rulesJSON(f.Shim.Rules), true},
		{"mode", f.Shim.Mode, f.Shim.Mode != f.orig.Mode},
		{"shell", f.Shim.Shell, f.Shim.Shell != f.orig.Shell},
		{"pathScope", f.Shim.PathScope, !reflect.DeepEqual(f.Shim.PathScope, f.orig.PathScope)},
		{"tools", f.Shim.Tools, !reflect.DeepEqual(f.Shim.Tools, f.orig.Tools)},
	}
	for _, fl := range fields {
		if !fl.changed {
			continue
		}
		v, err := encode(fl.value)
		if err != nil {
			return nil, err
		}
		shim = shim.set(fl.key, v)
	}
	return shim.encode()
}

// rulesJSON makes nil lists encode as [].
func rulesJSON(rules []Rule) []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		r.Grants = nonNil(r.Grants)
		out[i] = r
	}
	return out
}
