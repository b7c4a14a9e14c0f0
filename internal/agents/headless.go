package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agent-shim/agent-shim/internal/fileedit"
)

// What `agent-shim verify` does to its copy of an agent's files, in a
// temporary home: never to the person's own.

// setSetting sets the member at keys (a path of objects) to v in the JSON
// settings file at path (absent: {}; with comments when the agent reads
// them), making the objects it lacks.
func setSetting(path string, comments bool, v any, keys ...string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data = []byte("{}\n")
	} else if err != nil {
		return err
	}
	parse := fileedit.ParseJSON
	if comments {
		parse = fileedit.ParseJSONC
	}
	root, err := parse(path, data)
	if err != nil {
		return err
	}
	obj := root
	for i, k := range keys {
		if obj.Kind != '{' {
			return fmt.Errorf("%s: %s is not an object", path, k)
		}
		m := obj.Member(k)
		if m == nil {
			nest := v
			for j := len(keys) - 1; j > i; j-- {
				nest = map[string]any{keys[j]: nest}
			}
			if data, err = fileedit.Append(data, root, obj, k, nest); err != nil {
				return err
			}
			return os.WriteFile(path, data, 0o600)
		}
		if i == len(keys)-1 {
			enc, err := fileedit.Encode(v)
			if err != nil {
				return err
			}
			return os.WriteFile(path, fileedit.Splice(data, m.Start, m.End, enc), 0o600)
		}
		obj = m
	}
	return nil
}

// RehomeHook returns the hook command cmd of ours with the shim at exe
// and --config cfg, in the form cmd has (plain, or in the same guard).
func (a *Agent) RehomeHook(cmd, exe, cfg string) (string, bool) {
	oldExe, oldCfg, guarded, ok := a.Ours(cmd)
	if !ok {
		return "", false
	}
	if !guarded {
		return a.PlainCommand(exe, cfg), true
	}
	for _, g := range []func() string{guardTimeout, guardPerl} {
		if cmd == Guarded(g(), a.PlainCommand(oldExe, oldCfg)) {
			return Guarded(g(), a.PlainCommand(exe, cfg)), true
		}
	}
	return "", false
}

// CopyTrust writes into the copy of the companion at path (data) the
// trust the hook of the copied settings (settings, settingsData, read
// with getenv) needs, when the person's hook was trusted: theirs is the
// person's settings (from, fromData), companion (fromCompanion) and
// environment (fromGetenv). A hook the person had not trusted, or had
// changed since, stays untrusted in the copy, as Codex would run it.
// For an agent without trust (no companion), data comes back unchanged.
func (a *Agent) CopyTrust(fromGetenv func(string) string, from string, fromData, fromCompanion []byte,
	getenv func(string) string, path string, data []byte, settings string, settingsData []byte) ([]byte, error) {
	if a.companion == nil || a.companion.trust == nil {
		return data, nil
	}
	return a.companion.trust(fromGetenv, from, fromData, fromCompanion, getenv, path, data, settings, settingsData)
}

// codexCopyTrust is Codex's CopyTrust.
func codexCopyTrust(fromGetenv func(string) string, from string, fromData, fromCompanion []byte,
	getenv func(string) string, path string, data []byte, settings string, settingsData []byte) ([]byte, error) {
	key, hash, ok := codexTrust(fromGetenv, from, fromData)
	if !ok {
		return data, nil
	}
	d, err := fileedit.ParseTOML(codexConfig(from), fromCompanion)
	if err != nil {
		return nil, err
	}
	state, _ := fileedit.Lookup(d.Value, "hooks", "state", key)
	st, _ := state.(map[string]any)
	if st["trusted_hash"] != hash || st["enabled"] == false {
		return data, nil
	}
	key, hash, ok = codexTrust(getenv, settings, settingsData)
	if !ok {
		return data, nil
	}
	out, _, err := setTrust(path, data, key, hash)
	return out, err
}

// codexTurnHooksOff sets features.hooks = false in the config.toml beside
// the copy of hooks.json at settings.
func codexTurnHooksOff(settings string) error {
	path := codexConfig(settings)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, _, _, err := setFeatureHooksTo(path, data, false)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

// geminiPrepare signs the copy of Gemini CLI's settings in with an API
// key (which honours GOOGLE_GEMINI_BASE_URL) and trusts project (an
// untrusted folder turns --yolo back to the default mode).
func geminiPrepare(settings, project string) error {
	if err := setSetting(settings, true, "gemini-api-key", "security", "auth", "selectedType"); err != nil {
		return err
	}
	trusted, err := json.Marshal(map[string]string{project: "TRUST_FOLDER"})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(filepath.Dir(settings), "trustedFolders.json"), append(trusted, '\n'), 0o600)
}
