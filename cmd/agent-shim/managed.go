package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/pelletier/go-toml/v2/unstable"
)

// `agent-shim install <agent> --managed` puts the hook in the agent's
// managed tier: settings a user-level write cannot override, which teams
// fill through MDM or configuration management, and which only root can
// write. In bypass or yolo mode an agent can edit its user settings (and
// has removed the agent-shim hook from them); it cannot take a hook out
// of these:
//
//   - Claude Code: a drop-in in managed-settings.d beside
//     managed-settings.json, /etc/claude-code on Linux and
//     /Library/Application Support/ClaudeCode on macOS; the same hooks as
//     the user install, "onFailure": "block" included.
//   - Codex: the hooks of /etc/codex/requirements.toml ([[hooks.PreToolUse]]
//     array tables), which Codex runs as managed hooks: no trust entry is
//     needed, and a user's config cannot disable them.
//   - Gemini CLI: the system settings, /etc/gemini-cli/settings.json on
//     Linux, /Library/Application Support/GeminiCli/settings.json on macOS
//     ($GEMINI_CLI_SYSTEM_SETTINGS_PATH when set, as Gemini CLI reads it),
//     which override every other settings file.
//
// The hook command has the same fail-closed form as the user install. The
// files are written 0644 (the agent, running as the user, reads them).
// The shim the command runs must itself be out of the user's reach: a
// binary in ~/go/bin can be replaced by the very agent the tier is meant
// to hold; install and doctor say so.

// managedSettings is the file of agent's managed tier.
func managedSettings(agent string, getenv func(string) string) string {
	darwin := runtime.GOOS == "darwin"
	switch agent {
	case "claude-code":
		dir := "/etc/claude-code"
		if darwin {
			dir = "/Library/Application Support/ClaudeCode"
		}
		return filepath.Join(dir, "managed-settings.d", "agent-shim.json")
	case "codex":
		return "/etc/codex/requirements.toml"
	case "gemini-cli":
		if p := getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
			return p
		}
		if darwin {
			return "/Library/Application Support/GeminiCli/settings.json"
		}
		return "/etc/gemini-cli/settings.json"
	}
	return ""
}

// userWritable says who other than root could replace path or a
// directory above it ("" when nobody): the managed tier holds only while
// the shim it runs does.
func userWritable(path string) string {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Sprintf("%s: %v", p, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		switch {
		case ok && st.Uid != 0:
			return fmt.Sprintf("%s belongs to uid %d", p, st.Uid)
		case fi.Mode().Perm()&0o002 != 0 && fi.Mode()&os.ModeSticky == 0:
			return p + " is writable by everyone"
		case fi.Mode().Perm()&0o020 != 0 && ok && st.Gid != 0:
			return fmt.Sprintf("%s is writable by group %d", p, st.Gid)
		}
		if p == filepath.Dir(p) {
			return ""
		}
	}
}

// The Codex group in requirements.toml.
var codexManagedEvent = []string{"hooks", "PreToolUse"}

// setCodexManaged makes requirements.toml's hooks.PreToolUse hold exactly
// one group of ours, running cmd: other groups of ours are removed, and
// the group is appended as array tables when it is not already there.
func setCodexManaged(path string, data []byte, cmd string) ([]byte, error) {
	d, err := parseTOML(path, data)
	if err != nil {
		return nil, err
	}
	want := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": int64(hookTimeout)}}}
	groups, _ := lookup(d.value, codexManagedEvent...)
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
		if d, err = parseTOML(path, data); err != nil {
			return nil, err
		}
		groups, _ = lookup(d.value, codexManagedEvent...)
		arr, _ = groups.([]any)
	}
	block := "[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = " + tomlQuote(cmd) + fmt.Sprintf("\ntimeout = %d\n", hookTimeout)
	out, err := checked(path, appendBlock(data, block), withValue(d.value, append(slices.Clone(arr), want), codexManagedEvent...), indentLines(block))
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
	d, err := parseTOML(path, out)
	if err != nil {
		return nil, err
	}
	x := d.find(unstable.KeyValue, "features", "hooks")
	if x == nil || x.valEnd == 0 {
		return nil, fmt.Errorf("%w: %s: features.hooks not found after setting it", errTOMLEdit, path)
	}
	return splice(out, x.valEnd, x.valEnd, " "+pinMark), nil
}

// pinMark marks the features.hooks install set in requirements.toml.
const pinMark = "# agent-shim: managed hooks on"

// unpinCodexHooks removes features.hooks when it carries pinMark (and the
// [features] table when nothing else is left in it).
func unpinCodexHooks(path string, data []byte) ([]byte, error) {
	d, err := parseTOML(path, data)
	if err != nil {
		return nil, err
	}
	x := d.find(unstable.KeyValue, "features", "hooks")
	if x == nil || x.valEnd == 0 || !strings.HasPrefix(strings.TrimSpace(string(data[x.valEnd:lineEnd(data, x.valEnd)])), pinMark) {
		return data, nil
	}
	return unsetFeatureHooks(path, data, "", true)
}

// unsetCodexManaged removes every hooks.PreToolUse group all of whose
// handlers are ours, written as array tables, and then the features.hooks
// pin install set (pinCodexHooks).
func unsetCodexManaged(path string, data []byte) ([]byte, error) {
	for {
		d, err := parseTOML(path, data)
		if err != nil {
			return nil, err
		}
		groups, _ := lookup(d.value, codexManagedEvent...)
		arr, _ := groups.([]any)
		gi := -1 // the index of the group in the array
		for i, x := range d.exprs {
			if x.kind != unstable.ArrayTable || !slices.Equal(x.path, codexManagedEvent) {
				continue
			}
			gi++
			if gi >= len(arr) || !codexGroupOurs(arr[gi]) {
				continue
			}
			end := len(data)
			for _, y := range d.exprs[i+1:] {
				if (y.kind == unstable.Table || y.kind == unstable.ArrayTable) && !slices.Equal(y.path, append(slices.Clone(codexManagedEvent), "hooks")) {
					end = y.start
					break
				}
			}
			start := x.start
			if start >= 2 && data[start-1] == '\n' && data[start-2] == '\n' {
				start--
			}
			rest := slices.Delete(slices.Clone(arr), gi, gi+1)
			var v any = rest
			if len(rest) == 0 {
				v = nil
			}
			out, err := checked(path, splice(data, start, end, ""), withValue(d.value, v, codexManagedEvent...), "  (remove the [[hooks.PreToolUse]] group that runs agent-shim)\n")
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
		if !isOurCommand(c, "codex") {
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

// pinGeminiHooks makes Gemini CLI's system settings say hooksConfig.enabled
// true. The system file overrides the user's key by key, so a user's
// "hooksConfig": {"enabled": false} turns every hook off, the system's
// included, unless the system file sets the key itself (Gemini CLI 0.61;
// TestManagedTier/gemini-cli in e2e). A false there is the
// administrator's choice against hooks: install refuses rather than undo
// it. What it adds is noted in rec.Created ("hooksConfig" or
// "hooksConfig.enabled"), for unpinGeminiHooks.
//
// What it cannot hold: hooksConfig.disabled is merged across the files
// as a union, so a user's file that lists the hook's name (or command)
// switches the system's hook off all the same (e2e
// TestManagedTierGeminiDisabledList). Against that only the gate's own
// protection of the user's settings stands.
func pinGeminiHooks(path string, data []byte, rec *installRecord) ([]byte, error) {
	root, err := parseDocComments(path, data)
	if err != nil {
		return nil, err
	}
	if root.kind != '{' {
		return nil, fmt.Errorf("%s:1:1: the settings are not a JSON object", path)
	}
	note := func(name string) {
		if !slices.Contains(rec.Created, name) {
			rec.Created = append(rec.Created, name)
		}
	}
	hc := root.member("hooksConfig")
	switch {
	case hc == nil:
		note("hooksConfig")
		return appendItem(data, root, root, "hooksConfig", map[string]any{"enabled": true})
	case hc.kind != '{':
		line, col := lineCol(data, hc.start)
		return nil, fmt.Errorf("%s:%d:%d: hooksConfig is not an object", path, line, col)
	}
	en := hc.member("enabled")
	if en == nil {
		note("hooksConfig.enabled")
		return appendItem(data, root, hc, "enabled", true)
	}
	switch string(data[en.start:en.end]) {
	case "true":
		return data, nil
	case "false":
		line, col := lineCol(data, en.start)
		return nil, fmt.Errorf("%s:%d:%d: hooksConfig.enabled is false: every hook is off, the one install would add too; remove the key (install sets it true) or set it true", path, line, col)
	}
	line, col := lineCol(data, en.start)
	return nil, fmt.Errorf("%s:%d:%d: hooksConfig.enabled is not a boolean", path, line, col)
}

// unpinGeminiHooks takes out what pinGeminiHooks added, as rec notes it:
// hooksConfig.enabled, and hooksConfig when install made it and nothing
// else is in it. A value changed since is left alone.
func unpinGeminiHooks(path string, data []byte, rec *installRecord) ([]byte, error) {
	root, err := parseDocComments(path, data)
	if err != nil {
		return nil, err
	}
	hc := root.member("hooksConfig")
	madeTable, madeKey := slices.Contains(rec.Created, "hooksConfig"), slices.Contains(rec.Created, "hooksConfig.enabled")
	if hc == nil || hc.kind != '{' || !madeTable && !madeKey {
		return data, nil
	}
	i := hc.memberIndex("enabled")
	if i < 0 || string(data[hc.members[i].val.start:hc.members[i].val.end]) != "true" {
		return data, nil
	}
	forget := func(name string) {
		rec.Created = slices.DeleteFunc(rec.Created, func(c string) bool { return c == name })
	}
	forget("hooksConfig.enabled")
	if madeTable && len(hc.members) == 1 {
		forget("hooksConfig")
		return removeItem(data, root, root.memberIndex("hooksConfig")), nil
	}
	return removeItem(data, hc, i), nil
}
