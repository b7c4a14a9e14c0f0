package install

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/fileedit"
)

// The hook groups of a JSON settings file: {"hooks": {"<event>": [group,
// …]}}, a group being {"matcher": …, "hooks": [handler, …]}.

// objectAt returns the object at key of obj, creating it (and recording
// name as created) when absent; again is true when it created it (the
// document must be parsed anew).
func objectAt(path string, data []byte, root, obj *fileedit.Value, key, name string, rec *agents.Record, create bool) (out []byte, v *fileedit.Value, again bool, err error) {
	v = obj.Member(key)
	if v == nil {
		if !create {
			return data, nil, false, nil
		}
		data, err := fileedit.Append(data, root, obj, key, map[string]any{})
		if err != nil {
			return nil, nil, false, err
		}
		if !slices.Contains(rec.Created, name) {
			rec.Created = append(rec.Created, name)
		}
		return data, nil, true, nil
	}
	if v.Kind != '{' {
		line, col := fileedit.LineCol(data, v.Start)
		return nil, nil, false, fmt.Errorf("%s:%d:%d: %s is not an object", path, line, col, name)
	}
	return data, v, false, nil
}

// installGroups makes the hook groups of a in data exactly one group per
// event running cmd: an equal group is kept, other groups of ours (an
// older path, other flags) are replaced.
func installGroups(path string, data []byte, a *agents.Agent, cmd string, rec *agents.Record) ([]byte, error) {
	for _, ev := range a.Events() {
		want := a.Group(cmd, ev)
		for range 8 { // each round changes one thing and scans again
			root, err := a.Parse(path, data)
			if err != nil {
				return nil, err
			}
			if root.Kind != '{' {
				return nil, fmt.Errorf("%s:1:1: the settings are not a JSON object", path)
			}
			d, hooksObj, again, err := objectAt(path, data, root, root, "hooks", "hooks", rec, true)
			if err != nil {
				return nil, err
			}
			if again {
				data = d
				continue
			}
			arr := hooksObj.Member(ev)
			if arr == nil {
				if data, err = fileedit.Append(data, root, hooksObj, ev, []any{}); err != nil {
					return nil, err
				}
				rec.Created = append(rec.Created, "hooks."+ev)
				continue
			}
			if arr.Kind != '[' {
				line, col := fileedit.LineCol(data, arr.Start)
				return nil, fmt.Errorf("%s:%d:%d: hooks.%s is not an array", path, line, col, ev)
			}
			// Is exactly one group of ours there, equal to want?
			equal, ours := -1, 0
			for i, g := range arr.Elems {
				if n := oursIn(data, g, a); n > 0 {
					ours++
					if fileedit.Same(data, g, want) {
						equal = i
					}
				}
			}
			if ours == 0 {
				data, err = fileedit.Append(data, root, arr, "", want)
				if err != nil {
					return nil, err
				}
				continue
			}
			if ours == 1 && equal >= 0 {
				break
			}
			// Remove one group or handler of ours that is not want.
			data = removeOurs(data, arr, a, equal)
		}
	}
	return data, nil
}

// oursIn counts the handlers of ours in hook group g.
func oursIn(data []byte, g *fileedit.Value, a *agents.Agent) int {
	hs := g.Member("hooks")
	if hs == nil || hs.Kind != '[' {
		return 0
	}
	n := 0
	for _, h := range hs.Elems {
		if c := h.Member("command"); c != nil && c.Kind == '"' && a.IsOurs(fileedit.String(data, c)) {
			n++
		}
	}
	return n
}

// removeOurs removes, from the groups of arr other than keep, the first
// group all of whose handlers are ours, or else the first handler of ours.
func removeOurs(data []byte, arr *fileedit.Value, a *agents.Agent, keep int) []byte {
	for i, g := range arr.Elems {
		if i == keep {
			continue
		}
		n := oursIn(data, g, a)
		if n == 0 {
			continue
		}
		hs := g.Member("hooks")
		if n == len(hs.Elems) {
			return fileedit.Remove(data, arr, i)
		}
		for j, h := range hs.Elems {
			if c := h.Member("command"); c != nil && c.Kind == '"' && a.IsOurs(fileedit.String(data, c)) {
				return fileedit.Remove(data, hs, j)
			}
		}
	}
	return data
}

// uninstallGroups removes every group and handler of ours, then the event
// arrays and the hooks object install created, if they are empty.
func uninstallGroups(path string, data []byte, a *agents.Agent, rec *agents.Record) ([]byte, error) {
	for {
		root, err := a.Parse(path, data)
		if err != nil {
			return nil, err
		}
		hooksObj := root.Member("hooks")
		if root.Kind != '{' || hooksObj == nil || hooksObj.Kind != '{' {
			return data, nil
		}
		changed := false
		for _, ev := range a.Events() {
			arr := hooksObj.Member(ev)
			if arr == nil || arr.Kind != '[' {
				continue
			}
			if d := removeOurs(data, arr, a, -1); !bytes.Equal(d, data) {
				data, changed = d, true
				break
			}
			if len(arr.Elems) == 0 && slices.Contains(rec.Created, "hooks."+ev) {
				data, changed = fileedit.Remove(data, hooksObj, hooksObj.MemberIndex(ev)), true
				break
			}
		}
		if changed {
			continue
		}
		if len(hooksObj.Members) == 0 && slices.Contains(rec.Created, "hooks") {
			return fileedit.Remove(data, root, root.MemberIndex("hooks")), nil
		}
		return data, nil
	}
}
