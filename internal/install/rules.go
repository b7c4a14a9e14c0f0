package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/fileedit"
	"github.com/agent-shim/agent-shim/internal/secondline"
)

// The second line (package secondline): the policy compiled into the
// agent's own rules, placed beside the hook in the same tier. Codex and
// Gemini CLI read them from a file of agent-shim's own, which install
// writes whole and uninstall removes; Claude Code from its settings'
// permissions lists, into which install merges its entries (recording
// which, and the objects it made) and from which uninstall takes exactly
// those: the file comes back byte for byte.

// rulesHeader starts every rules file secondline writes.
var rulesHeader = []byte("# agent-shim's second line")

func sum(data []byte) string {
	h := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(h[:])
}

// placeRules writes the compiled rules to their own file (Codex, Gemini
// CLI). A file there that is not one of agent-shim's is left, and install
// fails before it changes anything else.
func (o *Options) placeRules(ctx context.Context, r *Report, path string, out secondline.Output, rec *agents.Record, mode fs.FileMode) error {
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading %s: %w", path, err)
	case !bytes.HasPrefix(old, rulesHeader) && sum(old) != rec.RulesHash:
		return fmt.Errorf("%s exists and is not agent-shim's second line: move it away and run install again", path)
	case bytes.Equal(old, out.Text):
		rec.RulesFile, rec.RulesHash = path, sum(out.Text)
		r.note("the second line is already in %s", path)
		return nil
	}
	if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, fs.ErrNotExist) {
		rec.RulesDir = true
	}
	_, changed, err := o.editTOML(ctx, r, path, mode, func([]byte) ([]byte, error) { return out.Text, nil })
	if err != nil {
		return err
	}
	rec.RulesFile, rec.RulesHash = path, sum(out.Text)
	if changed {
		r.note("placed the second line in %s: %d rules from %d of the policy's (what they leave out: agent-shim rules --notes %s)", path, out.Patterns, out.Compiled, o.Agent.Name)
	}
	return nil
}

// removeRules removes the rules file install wrote, unless it changed
// since.
func removeRules(r *Report, rec *agents.Record) error {
	if rec.RulesFile == "" {
		return nil
	}
	data, err := os.ReadFile(rec.RulesFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("reading %s: %w", rec.RulesFile, err)
	case sum(data) != rec.RulesHash:
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s changed since install wrote it: left as it is", rec.RulesFile))
		return nil
	}
	if err := removeWithLock(rec.RulesFile); err != nil {
		return err
	}
	r.note("removed the second line, %s", rec.RulesFile)
	if rec.RulesDir {
		os.Remove(filepath.Dir(rec.RulesFile)) // when nothing else is in it
	}
	return nil
}

// mergeRules makes the settings' rules lists (agent's Rules.Member, such
// as permissions.deny and permissions.ask) hold the compiled entries
// (out.Text, a document {member: {list: [entries]}}): entries missing are
// appended, entries install added before that the policy no longer gives
// go; rec.RulesAdded becomes what install added and is still wanted.
// Entries the person wrote are never touched.
func mergeRules(path string, data []byte, a *agents.Agent, out secondline.Output, rec *agents.Record) ([]byte, error) {
	var doc map[string]map[string][]string
	if err := json.Unmarshal(out.Text, &doc); err != nil {
		return nil, fmt.Errorf("the compiled rules of %s: %w", a.Name, err)
	}
	member := a.Rules.Member
	lists := doc[member]
	names := make([]string, 0, len(lists))
	for n := range lists {
		names = append(names, n)
	}
	for n := range rec.RulesAdded {
		if _, ok := lists[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	added := map[string][]string{}
	for _, name := range names {
		want := lists[name]
		wanted := map[string]bool{}
		for _, e := range want {
			wanted[e] = true
		}
		// What install added before and the policy no longer gives.
		var stale []string
		for _, e := range rec.RulesAdded[name] {
			if !wanted[e] {
				stale = append(stale, e)
			}
		}
		var err error
		if data, err = dropEntries(path, data, a, member, name, stale); err != nil {
			return nil, err
		}
		root, err := a.Parse(path, data)
		if err != nil {
			return nil, err
		}
		if root.Kind != '{' {
			return nil, fmt.Errorf("%s:1:1: the settings are not a JSON object", path)
		}
		if len(want) == 0 {
			continue
		}
		obj := root.Member(member)
		items := make([]any, len(want))
		for i, e := range want {
			items[i] = e
		}
		switch {
		case obj == nil:
			if data, err = fileedit.Append(data, root, root, member, map[string]any{name: items}); err != nil {
				return nil, err
			}
			noteCreated(rec, member, member+"."+name)
			added[name] = want
			continue
		case obj.Kind != '{':
			line, col := fileedit.LineCol(data, obj.Start)
			return nil, fmt.Errorf("%s:%d:%d: %s is not an object", path, line, col, member)
		}
		arr := obj.Member(name)
		switch {
		case arr == nil:
			if data, err = fileedit.Append(data, root, obj, name, items); err != nil {
				return nil, err
			}
			noteCreated(rec, member+"."+name)
			added[name] = want
			continue
		case arr.Kind != '[':
			line, col := fileedit.LineCol(data, arr.Start)
			return nil, fmt.Errorf("%s:%d:%d: %s.%s is not an array", path, line, col, member, name)
		}
		present := map[string]bool{}
		for _, el := range arr.Elems {
			if s, ok := fileedit.Decoded(data, el).(string); ok {
				present[s] = true
			}
		}
		ours := map[string]bool{}
		for _, e := range rec.RulesAdded[name] {
			ours[e] = true
		}
		var missing []any
		for _, e := range want {
			switch {
			case !present[e]:
				missing = append(missing, e)
				added[name] = append(added[name], e)
			case ours[e]:
				added[name] = append(added[name], e)
			}
		}
		if data, err = fileedit.AppendAll(data, root, arr, missing); err != nil {
			return nil, err
		}
	}
	rec.RulesAdded = nil
	if len(added) > 0 {
		rec.RulesAdded = added
	}
	return dropEmpty(path, data, a, rec, names)
}

// unmergeRules takes out of the settings the entries install added, and
// the lists and object it made for them when they are left empty.
func unmergeRules(path string, data []byte, a *agents.Agent, rec *agents.Record) ([]byte, error) {
	names := make([]string, 0, len(rec.RulesAdded))
	for n := range rec.RulesAdded {
		names = append(names, n)
	}
	sort.Strings(names)
	var err error
	for _, name := range names {
		if data, err = dropEntries(path, data, a, a.Rules.Member, name, rec.RulesAdded[name]); err != nil {
			return nil, err
		}
	}
	return dropEmpty(path, data, a, rec, names)
}

// dropEmpty removes the lists of names and the rules' object that install
// made (rec.Created) when they are empty, and forgets having made them.
func dropEmpty(path string, data []byte, a *agents.Agent, rec *agents.Record, names []string) ([]byte, error) {
	member := a.Rules.Member
	forget := func(name string) {
		rec.Created = slices.DeleteFunc(rec.Created, func(c string) bool { return c == name })
	}
	for _, name := range names {
		root, err := a.Parse(path, data)
		if err != nil {
			return nil, err
		}
		obj := root.Member(member)
		if arr := obj.Member(name); arr != nil && arr.Kind == '[' && len(arr.Elems) == 0 && slices.Contains(rec.Created, member+"."+name) {
			data = fileedit.Remove(data, obj, obj.MemberIndex(name))
			forget(member + "." + name)
		}
	}
	root, err := a.Parse(path, data)
	if err != nil {
		return nil, err
	}
	if obj := root.Member(member); obj != nil && obj.Kind == '{' && len(obj.Members) == 0 && slices.Contains(rec.Created, member) {
		data = fileedit.Remove(data, root, root.MemberIndex(member))
		forget(member)
	}
	return data, nil
}

// dropEntries removes the string entries of member.name that are in
// entries.
func dropEntries(path string, data []byte, a *agents.Agent, member, name string, entries []string) ([]byte, error) {
	if len(entries) == 0 {
		return data, nil
	}
	root, err := a.Parse(path, data)
	if err != nil {
		return nil, err
	}
	arr := root.Member(member).Member(name)
	if arr == nil || arr.Kind != '[' {
		return data, nil
	}
	drop := map[string]bool{}
	for _, e := range entries {
		drop[e] = true
	}
	var idx []int
	for i, el := range arr.Elems {
		if s, ok := fileedit.Decoded(data, el).(string); ok && drop[s] {
			idx = append(idx, i)
		}
	}
	return fileedit.RemoveAll(data, arr, idx), nil
}

func noteCreated(rec *agents.Record, names ...string) {
	for _, n := range names {
		if !slices.Contains(rec.Created, n) {
			rec.Created = append(rec.Created, n)
		}
	}
}
