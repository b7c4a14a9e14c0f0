package agents

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agent-shim/agent-shim/internal/fileedit"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex's config.toml, the companion of its hooks.json: install turns the
// hooks feature on and trusts the hook there (codexCompanion); and
// requirements.toml, its managed tier. Both are edited through
// fileedit's TOML editor.

// codexCompanion is config.toml beside hooks.json.
var codexCompanion = &Companion{
	Path:      codexConfig,
	Check:     codexPrecheck,
	Set:       codexConfigure,
	Unset:     codexUnconfigure,
	UnsetNote: "undid features." + flagLine + " and the hook's trust in",
	Checks:    codexChecks,
	trust:     codexCopyTrust,
}

// codexConfig is the config.toml beside Codex's hooks.json.
func codexConfig(hooksPath string) string {
	return filepath.Join(filepath.Dir(hooksPath), "config.toml")
}

const flagLine = "hooks = true"

// codexPrecheck makes, without writing them, the edits codexConfigure
// will make to config.toml.
func codexPrecheck(path string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if data, _, _, err = setFeatureHooks(path, data); err != nil {
		return err
	}
	_, _, err = setTrust(path, data, codexHookKey(filepath.Join(filepath.Dir(path), "hooks.json"), "PreToolUse", 0, 0), "sha256:")
	return err
}

// codexConfigure sets features.hooks = true in config.toml (data, at
// path) and trusts the hook of hooks.json there as Codex's /hooks would,
// recording what it changed.
func codexConfigure(getenv func(string) string, path string, data []byte, hooksPath string, hooksData []byte, rec *Record) ([]byte, []string, error) {
	key, hash, ok := codexTrust(getenv, hooksPath, hooksData)
	if !ok {
		return nil, nil, fmt.Errorf("%s: no agent-shim hook to trust", hooksPath)
	}
	var notes []string
	out, prev, added, err := setFeatureHooks(path, data)
	if err != nil {
		return nil, nil, err
	}
	if !bytes.Equal(out, data) {
		if rec.FlagLine == "" {
			rec.FlagLine, rec.PrevFlag, rec.FeaturesAdded = flagLine, prev, added
		}
		notes = append(notes, fmt.Sprintf("set features.%s in %s", flagLine, path))
	}
	before := out
	out, prev, err = setTrust(path, out, key, hash)
	if err != nil {
		return nil, nil, err
	}
	if !bytes.Equal(out, before) {
		if rec.TrustKey != key {
			rec.PrevTrust = prev
		}
		rec.TrustKey, rec.TrustHash = key, hash
		notes = append(notes, fmt.Sprintf("trusted the hook in %s, as Codex's /hooks does: [hooks.state.%s] trusted_hash = %q", path, fileedit.Quote(key), hash))
	}
	return out, notes, nil
}

// codexUnconfigure undoes codexConfigure as rec records it.
func codexUnconfigure(path string, data []byte, rec *Record) ([]byte, error) {
	var err error
	if rec.TrustKey != "" {
		if data, err = unsetTrust(path, data, rec.TrustKey, rec.TrustHash, rec.PrevTrust); err != nil {
			return nil, err
		}
	}
	if rec.FlagLine != "" {
		prev := rec.PrevFlag
		if prev == "" && rec.PrevFlagLine != nil { // an older install's record
			_, prev, _ = strings.Cut(*rec.PrevFlagLine, "=")
			prev, _, _ = strings.Cut(strings.TrimSpace(prev), " ")
		}
		if data, err = unsetFeatureHooks(path, data, prev, rec.FeaturesAdded); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// codexChecks checks config.toml (data): the hooks feature, and the
// trust Codex needs before it runs our hook of the user's hooks.json.
func codexChecks(f *Found, data []byte) []Check {
	cpath := codexConfig(f.UserPath)
	d, err := fileedit.ParseTOML(cpath, data)
	if err != nil {
		return []Check{{Name: "config.toml", Status: Fail, Detail: err.Error() + ": Codex does not start", Fix: "fix the file"}}
	}
	var out []Check
	if off := codexHooksOff(d.Value); off != "" {
		out = append(out, Check{Name: "hooks feature", Status: Fail,
			Detail: off + " in config.toml: Codex runs no hooks", Fix: f.Fix})
	}
	if f.Managed {
		return append(out, Check{Name: "trust", Status: OK, Detail: "managed hooks need no trust"})
	}
	key, hash, ok := codexTrust(f.Getenv, f.UserPath, f.UserData)
	if !ok {
		return out
	}
	state, _ := fileedit.Lookup(d.Value, "hooks", "state", key)
	st, _ := state.(map[string]any)
	trusted, _ := st["trusted_hash"].(string)
	switch {
	case st["enabled"] == false:
		out = append(out, Check{Name: "trust", Status: Fail,
			Detail: fmt.Sprintf("[hooks.state.%s] enabled = false in %s: Codex skips the hook", fileedit.Quote(key), cpath), Fix: "remove that line, then " + f.Fix})
	case trusted == "":
		out = append(out, Check{Name: "trust", Status: Fail,
			Detail: fmt.Sprintf("the hook is not trusted (no [hooks.state.%s] trusted_hash in %s): Codex skips it without a word", fileedit.Quote(key), cpath), Fix: f.Fix})
	case trusted != hash:
		out = append(out, Check{Name: "trust", Status: Fail,
			Detail: fmt.Sprintf("the hook changed since it was trusted (trusted_hash %s, the hook's is %s): Codex skips it", trusted, hash), Fix: f.Fix})
	default:
		out = append(out, Check{Name: "trust", Status: OK,
			Detail: fmt.Sprintf("trusted in %s: [hooks.state.%s] trusted_hash = %q", cpath, fileedit.Quote(key), hash)})
	}
	return out
}

// codexHooksOff says which features flag of config.toml turns hooks off
// ("hooks" wins over its deprecated alias "codex_hooks"), or "".
func codexHooksOff(v map[string]any) string {
	if on, set := codexFeature(v, "hooks"); set {
		if !on {
			return "features.hooks = false"
		}
		return ""
	}
	if on, set := codexFeature(v, "codex_hooks"); set && !on {
		return "features.codex_hooks = false"
	}
	return ""
}

// codexKeyPath is hooks.json's path as Codex names it in its trust keys:
// with CODEX_HOME set, Codex canonicalizes it (links resolved).
func codexKeyPath(getenv func(string) string, hooksPath string) string {
	if getenv("CODEX_HOME") == "" {
		return hooksPath
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(hooksPath)); err == nil {
		return filepath.Join(dir, filepath.Base(hooksPath))
	}
	return hooksPath
}

// codexTrust is the trust Codex needs for our PreToolUse handler in
// hooks.json: its hooks.state key and trusted_hash. ok is false when the
// file holds no handler of ours.
func codexTrust(getenv func(string) string, hooksPath string, data []byte) (key, hash string, ok bool) {
	root, err := fileedit.ParseJSON(hooksPath, data)
	if err != nil {
		return "", "", false
	}
	arr := root.Member("hooks").Member("PreToolUse")
	if arr == nil || arr.Kind != '[' {
		return "", "", false
	}
	for gi, g := range arr.Elems {
		hs := g.Member("hooks")
		if hs == nil || hs.Kind != '[' {
			continue
		}
		for hi, h := range hs.Elems {
			var x struct {
				Type          string  `json:"type"`
				Command       string  `json:"command"`
				Timeout       *int64  `json:"timeout"`
				Async         bool    `json:"async"`
				StatusMessage *string `json:"statusMessage"`
			}
			if json.Unmarshal(data[h.Start:h.End], &x) != nil || x.Type != "command" || !isOurs("codex", x.Command) {
				continue
			}
			var matcher *string
			if m := g.Member("matcher"); m != nil {
				var ms string
				if json.Unmarshal(data[m.Start:m.End], &ms) == nil {
					matcher = &ms
				}
			}
			return codexHookKey(codexKeyPath(getenv, hooksPath), "PreToolUse", gi, hi),
				codexHookHash("PreToolUse", matcher, codexHandler{x.Command, x.Timeout, x.Async, x.StatusMessage}), true
		}
	}
	return "", "", false
}

// codexManagedHooks is requirements.toml's hooks as a JSON document of
// the hooks.json shape.
func codexManagedHooks(path string, data []byte) ([]byte, error) {
	d, err := fileedit.ParseTOML(path, data)
	if err != nil {
		return nil, err
	}
	h, _ := fileedit.Lookup(d.Value, "hooks")
	return json.Marshal(map[string]any{"hooks": h})
}

// Codex runs a hook from a user's hooks.json only once a person trusted
// it (the TUI's /hooks); until then `codex exec` skips it without a word.
// The trust is stored in config.toml:
//
//	[hooks.state."<hooks.json path>:pre_tool_use:<group>:<handler>"]
//	trusted_hash = "sha256:<hex>"
//
// and a hook whose current hash differs is "modified": skipped as well.
// Both are computed here as Codex computes them (codex-rs, hooks/src/
// engine/discovery.rs: hook_key, hook_hash and the handler normalization
// before it; config/src/fingerprint.rs: version_for_toml):
//
//   - the key is the hooks.json path as Codex names it (CODEX_HOME
//     canonicalized when set, else ~/.codex), the event's snake_case
//     label, the group's index in the event's array and the handler's
//     index in the group;
//   - the hash is sha256 over the compact JSON, keys sorted, of the
//     identity {"event_name": label, "matcher": m, "hooks": [handler]},
//     where the handler is {"type": "command", "command": c, "timeout":
//     t, "async": a} plus "statusMessage" when set, the timeout defaulted
//     to 600 and at least 1, and fields that are unset (matcher,
//     statusMessage) left out, as the TOML value Codex hashes leaves them.
//     Strings are escaped as serde_json escapes them: only '"', '\\' and
//     control characters, nothing above U+001F.
//
// TestCodexHookHash holds this to hashes Codex 0.169.0's app-server
// reported (hooks/list, currentHash) for the same hooks.json.

// codexHandler is one command handler of a hooks.json group, as Codex
// reads it.
type codexHandler struct {
	Command       string
	Timeout       *int64
	Async         bool
	StatusMessage *string
}

// codexHookKey is the config.toml hooks.state key of a handler.
func codexHookKey(hooksPath, event string, group, handler int) string {
	return fmt.Sprintf("%s:%s:%d:%d", hooksPath, codexEventLabel(event), group, handler)
}

// codexEventLabel is Codex's snake_case label of a hooks.json event name.
func codexEventLabel(event string) string {
	var b strings.Builder
	for i, r := range event {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codexHookHash is the trusted_hash Codex wants for handler h of a group
// with matcher m (nil: none) under event.
func codexHookHash(event string, matcher *string, h codexHandler) string {
	timeout := int64(600)
	if h.Timeout != nil {
		timeout = max(*h.Timeout, 1)
	}
	handler := map[string]string{
		"type":    serdeString("command"),
		"command": serdeString(h.Command),
		"timeout": strconv.FormatInt(timeout, 10),
		"async":   strconv.FormatBool(h.Async),
	}
	if h.StatusMessage != nil {
		handler["statusMessage"] = serdeString(*h.StatusMessage)
	}
	identity := map[string]string{
		"event_name": serdeString(codexEventLabel(event)),
		"hooks":      "[" + serdeObject(handler) + "]",
	}
	// Codex drops the matcher of events that take none; PreToolUse and
	// PostToolUse keep it.
	if matcher != nil && event != "UserPromptSubmit" && event != "Stop" {
		identity["matcher"] = serdeString(*matcher)
	}
	sum := sha256.Sum256([]byte(serdeObject(identity)))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// serdeObject writes an object of already encoded values, keys sorted.
func serdeObject(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(serdeString(k))
		b.WriteByte(':')
		b.WriteString(m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// serdeString encodes s as serde_json does: '"' and '\\' escaped, control
// characters as \b \t \n \f \r or \u00xx, everything else as it is.
// (encoding/json would escape <, >, & and U+2028/U+2029 too.)
func serdeString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else if r == utf8.RuneError {
				b.WriteRune(utf8.RuneError) // Rust strings hold no invalid UTF-8
			} else {
				b.WriteRune(r)
			}
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
	return setFeatureHooksTo(path, data, true)
}

// setFeatureHooksTo is setFeatureHooks for either value (verify turns
// hooks off in its copy of config.toml).
func setFeatureHooksTo(path string, data []byte, on bool) (out []byte, prev string, tableAdded bool, err error) {
	d, err := fileedit.ParseTOML(path, data)
	if err != nil {
		return nil, "", false, err
	}
	if v, _ := fileedit.Lookup(d.Value, "features", "hooks"); v == on {
		return data, "", false, nil
	}
	val := strconv.FormatBool(on)
	want := fileedit.WithValue(d.Value, on, "features", "hooks")
	lines := "  [features]\n  hooks = " + val + "\n"
	if x := d.Find(unstable.KeyValue, "features", "hooks"); x != nil && x.ValEnd > 0 {
		prev = string(data[x.ValStart:x.ValEnd])
		out = fileedit.Splice(data, x.ValStart, x.ValEnd, val)
	} else if x := d.Find(unstable.Table, "features"); x != nil {
		out = fileedit.Splice(data, x.End, x.End, "hooks = "+val+"\n")
		if x.End == len(data) && !bytes.HasSuffix(data, []byte("\n")) {
			out = fileedit.Splice(data, x.End, x.End, "\nhooks = "+val+"\n")
		}
	} else if x := d.TopLevelUnder("features"); x != nil {
		// features.x = … in the top-level table: one more dotted key
		// beside them (a [features] table would define it twice).
		lines = "  features.hooks = " + val + "   (beside the other features.* keys)\n"
		ins := "features.hooks = " + val + "\n"
		if x.End == len(data) && !bytes.HasSuffix(data, []byte("\n")) {
			ins = "\n" + ins
		}
		out = fileedit.Splice(data, x.End, x.End, ins)
	} else if d.Find(unstable.KeyValue, "features") == nil {
		// No features, or only [features.x] tables: a [features] header
		// at the end defines it.
		out, tableAdded = fileedit.AppendBlock(data, "[features]\nhooks = "+val+"\n"), true
	} else {
		return nil, "", false, fileedit.InPlaceError(path, "features is not a table agent-shim can add a key to; add hooks = "+val+" to it yourself, then run the command again")
	}
	out, err = fileedit.Checked(path, out, want, lines)
	return out, prev, tableAdded, err
}

// unsetFeatureHooks undoes setFeatureHooks: the value goes back to prev,
// or the key goes (and the [features] table with it when the key was its
// only one and install added it).
func unsetFeatureHooks(path string, data []byte, prev string, tableAdded bool) ([]byte, error) {
	d, err := fileedit.ParseTOML(path, data)
	if err != nil {
		return nil, err
	}
	x := d.Find(unstable.KeyValue, "features", "hooks")
	if x == nil || x.ValEnd == 0 || string(data[x.ValStart:x.ValEnd]) != "true" {
		return data, nil // not ours any more
	}
	if prev != "" {
		pv, err := fileedit.ParseTOML(path, []byte("x = "+prev+"\n"))
		if err != nil {
			return nil, err
		}
		return fileedit.Checked(path, fileedit.Splice(data, x.ValStart, x.ValEnd, prev), fileedit.WithValue(d.Value, pv.Value["x"], "features", "hooks"), "  [features]\n  hooks = "+prev+"\n")
	}
	out := fileedit.Splice(data, x.Start, x.End, "")
	want := fileedit.WithValue(d.Value, nil, "features", "hooks")
	if tableAdded {
		// The table install added, now empty, goes too.
		if out, err = fileedit.DropEmptyTable(path, out, "features"); err != nil {
			return nil, err
		}
	}
	return fileedit.Checked(path, out, want, "  (remove hooks = true from [features])\n")
}

// setTrust writes trusted_hash for a Codex hook key, as Codex's /hooks
// does: [hooks.state."<key>"] trusted_hash = "sha256:…". It returns the
// new text and the value it replaced ("" when none).
func setTrust(path string, data []byte, key, hash string) (out []byte, prev string, err error) {
	d, err := fileedit.ParseTOML(path, data)
	if err != nil {
		return nil, "", err
	}
	if v, _ := fileedit.Lookup(d.Value, "hooks", "state", key, "trusted_hash"); v == hash {
		return data, "", nil
	}
	want := fileedit.WithValue(d.Value, hash, "hooks", "state", key, "trusted_hash")
	header := "[hooks.state." + fileedit.Quote(key) + "]\n"
	kv := "trusted_hash = " + fileedit.Quote(hash) + "\n"
	lines := "  " + header + "  " + kv
	if x := d.Find(unstable.KeyValue, "hooks", "state", key, "trusted_hash"); x != nil && x.ValEnd > 0 {
		prev = string(data[x.ValStart:x.ValEnd])
		out = fileedit.Splice(data, x.ValStart, x.ValEnd, fileedit.Quote(hash))
	} else if x := d.Find(unstable.Table, "hooks", "state", key); x != nil {
		ins := kv
		if x.End == len(data) && !bytes.HasSuffix(data, []byte("\n")) {
			ins = "\n" + ins
		}
		out = fileedit.Splice(data, x.End, x.End, ins)
	} else {
		out = fileedit.AppendBlock(data, header+kv)
	}
	out, err = fileedit.Checked(path, out, want, lines)
	return out, prev, err
}

// unsetTrust removes the trust entry setTrust wrote for key (or puts prev
// back), and the table when nothing else is in it.
func unsetTrust(path string, data []byte, key, hash, prev string) ([]byte, error) {
	d, err := fileedit.ParseTOML(path, data)
	if err != nil {
		return nil, err
	}
	x := d.Find(unstable.KeyValue, "hooks", "state", key, "trusted_hash")
	if v, _ := fileedit.Lookup(d.Value, "hooks", "state", key, "trusted_hash"); x == nil || x.ValEnd == 0 || v != hash {
		return data, nil // not ours any more
	}
	if prev != "" {
		pv, err := strconv.Unquote(prev)
		if err != nil {
			pv = strings.Trim(prev, `'"`)
		}
		return fileedit.Checked(path, fileedit.Splice(data, x.ValStart, x.ValEnd, prev), fileedit.WithValue(d.Value, pv, "hooks", "state", key, "trusted_hash"), "  trusted_hash = "+prev+"\n")
	}
	out := fileedit.Splice(data, x.Start, x.End, "")
	want := fileedit.WithValue(d.Value, nil, "hooks", "state", key, "trusted_hash")
	if out, err = fileedit.DropEmptyTable(path, out, "hooks", "state", key); err != nil {
		return nil, err
	}
	return fileedit.Checked(path, out, want, "  (remove the [hooks.state."+fileedit.Quote(key)+"] table)\n")
}

// codexFeature returns config.toml's features.<name> when it is a bool.
func codexFeature(v map[string]any, name string) (val, set bool) {
	x, ok := fileedit.Lookup(v, "features", name)
	b, isBool := x.(bool)
	return b, ok && isBool
}

// The Codex group in requirements.toml.
var codexManagedEvent = []string{"hooks", "PreToolUse"}

// setCodexManaged makes requirements.toml's hooks.PreToolUse hold exactly
// one group of ours, running cmd: other groups of ours are removed, and
// the group is appended as array tables when it is not already there.
func setCodexManaged(path string, data []byte, cmd string) ([]byte, error) {
	d, err := fileedit.ParseTOML(path, data)
	if err != nil {
		return nil, err
	}
	want := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": int64(HookTimeout)}}}
	groups, _ := fileedit.Lookup(d.Value, codexManagedEvent...)
	arr, _ := groups.([]any)
	ours := 0
	for _, g := range arr {
		if codexGroupOurs(g) {
			ours++
		}
	}
	if ours == 1 && slices.ContainsFunc(arr, func(g any) bool { return reflect.DeepEqual(g, want) }) {
		return pinCodexHooks(path, data)
	}
	if ours > 0 {
		if data, err = unsetCodexManaged(path, data); err != nil {
			return nil, err
		}
		if d, err = fileedit.ParseTOML(path, data); err != nil {
			return nil, err
		}
		groups, _ = fileedit.Lookup(d.Value, codexManagedEvent...)
		arr, _ = groups.([]any)
	}
	block := "[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = " + fileedit.Quote(cmd) + fmt.Sprintf("\ntimeout = %d\n", HookTimeout)
	out, err := fileedit.Checked(path, fileedit.AppendBlock(data, block), fileedit.WithValue(d.Value, append(slices.Clone(arr), want), codexManagedEvent...), indentLines(block))
	if err != nil {
		return nil, err
	}
	return pinCodexHooks(path, out)
}

// pinCodexHooks makes requirements.toml's features.hooks true: a feature
// requirements.toml sets, config.toml cannot turn off. Without it a
// user's config.toml saying [features] hooks = false turns the managed
// hooks off with all the others (Codex 0.169; TestManagedTier/codex in
// e2e fails without it). The key it sets carries pinMark, so that
// uninstall (unpinCodexHooks) takes out only what install put in.
func pinCodexHooks(path string, data []byte) ([]byte, error) {
	out, _, _, err := setFeatureHooks(path, data)
	if err != nil || string(out) == string(data) {
		return out, err // on already: the administrator's, left alone
	}
	d, err := fileedit.ParseTOML(path, out)
	if err != nil {
		return nil, err
	}
	x := d.Find(unstable.KeyValue, "features", "hooks")
	if x == nil || x.ValEnd == 0 {
		return nil, fileedit.InPlaceError(path, "features.hooks not found after setting it")
	}
	return fileedit.Splice(out, x.ValEnd, x.ValEnd, " "+pinMark), nil
}

// pinMark marks the features.hooks install set in requirements.toml.
const pinMark = "# agent-shim: managed hooks on"

// unpinCodexHooks removes features.hooks when it carries pinMark (and the
// [features] table when nothing else is left in it).
func unpinCodexHooks(path string, data []byte) ([]byte, error) {
	d, err := fileedit.ParseTOML(path, data)
	if err != nil {
		return nil, err
	}
	x := d.Find(unstable.KeyValue, "features", "hooks")
	if x == nil || x.ValEnd == 0 || !strings.HasPrefix(strings.TrimSpace(string(data[x.ValEnd:fileedit.LineEnd(data, x.ValEnd)])), pinMark) {
		return data, nil
	}
	return unsetFeatureHooks(path, data, "", true)
}

// unsetCodexManaged removes every hooks.PreToolUse group all of whose
// handlers are ours, written as array tables, and then the features.hooks
// pin install set (pinCodexHooks).
func unsetCodexManaged(path string, data []byte) ([]byte, error) {
	for {
		d, err := fileedit.ParseTOML(path, data)
		if err != nil {
			return nil, err
		}
		groups, _ := fileedit.Lookup(d.Value, codexManagedEvent...)
		arr, _ := groups.([]any)
		gi := -1 // the index of the group in the array
		for i, x := range d.Exprs {
			if x.Kind != unstable.ArrayTable || !slices.Equal(x.Path, codexManagedEvent) {
				continue
			}
			gi++
			if gi >= len(arr) || !codexGroupOurs(arr[gi]) {
				continue
			}
			end := len(data)
			for _, y := range d.Exprs[i+1:] {
				if (y.Kind == unstable.Table || y.Kind == unstable.ArrayTable) && !slices.Equal(y.Path, append(slices.Clone(codexManagedEvent), "hooks")) {
					end = y.Start
					break
				}
			}
			start := x.Start
			if start >= 2 && data[start-1] == '\n' && data[start-2] == '\n' {
				start--
			}
			rest := slices.Delete(slices.Clone(arr), gi, gi+1)
			var v any = rest
			if len(rest) == 0 {
				v = nil
			}
			out, err := fileedit.Checked(path, fileedit.Splice(data, start, end, ""), fileedit.WithValue(d.Value, v, codexManagedEvent...), "  (remove the [[hooks.PreToolUse]] group that runs agent-shim)\n")
			if err != nil {
				return nil, err
			}
			data = out
			gi = -2
			break
		}
		if gi != -2 {
			if slices.ContainsFunc(arr, codexGroupOurs) {
				return data, nil
			}
			return unpinCodexHooks(path, data)
		}
	}
}

// codexGroupOurs reports whether a decoded hooks group runs only our hook.
func codexGroupOurs(g any) bool {
	m, _ := g.(map[string]any)
	hs, _ := m["hooks"].([]any)
	for _, h := range hs {
		hm, _ := h.(map[string]any)
		c, _ := hm["command"].(string)
		if !isOurs("codex", c) {
			return false
		}
	}
	return len(hs) > 0
}

func indentLines(block string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(block, "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return b.String()
}
