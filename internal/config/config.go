// Package config reads and writes the agent's config.json: the permission
// grants under userSettings.globalPermissionGrants and the shim's own section
// under the top-level key "agentShim", which the agent ignores.
//
// A managed rule names the grants it expanded to by digest (see
// statefile.Digest) rather than repeating their text, which would double the
// file, and the rules of one manifest file are a group that names the file
// once; Load resolves the digests, so Rule.Grants holds the text either way.
//
// Load is on the hot path of every command the shim decides, so it decodes
// only what it needs in a single pass. Marshal, used by agents-setup, keeps
// every key it does not own and the order of keys at every level.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/agent-shim/agent-shim/statefile"
)

// Version is the version of the shim's section that this package writes.
const Version = 2

// Grants are the agent's permission grants, per list. Each grant is a
// string such as "command(regex:^git status$)" or "command(git status)".
// The type is statefile's, which records digests of them per list and
// cannot import this package (this package locks and writes through it).
type Grants = statefile.Grants

// Source says where a managed rule came from.
type Source struct {
	// Overlay is "." for the checkout root's own .agents/config,
	// "vendor/<x>" for an overlay, "builtin" for the embedded default
	// manifests and "ad-hoc" for rules given on the command line.
	Overlay string `json:"overlay"`
	// File is relative to the checkout root, the list file as given for
	// --*-list, and "" for -a/-d/-k.
	File string `json:"file"`
	// Line is 1-based, 0 for -a/-d/-k.
	Line int `json:"line"`
}

// Rule is one manifest line (or ad-hoc rule) with the grants it expanded to.
type Rule struct {
	Line     string   `json:"line"`
	Category string   `json:"category"`
	Source   Source   `json:"source"`
	Grants   []string `json:"grants"`
}

// PathScope lists the paths the file tools may act on outside the project.
type PathScope struct {
	Allow []string `json:"allow,omitempty"`
}

// Tools holds the user's per-tool grants for hook mode.
type Tools struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Shim is the shim's section of config.json (the key "agentShim").
// Version, Profile and Rules are written by agents-setup; Mode, Shell,
// Runtime, RequireHook, PathScope and Tools belong to the user.
type Shim struct {
	Version int    `json:"version"`
	Profile string `json:"profile"`
	Rules   []Rule `json:"rules"`
	Mode    string `json:"mode"`
	Shell   string `json:"shell"`
	// Runtime controls shell mode's run-time layer (Linux): "on" (the
	// default when empty), "off", or "require".
	Runtime string `json:"runtime"`
	// RequireHook makes shell mode refuse a line no hook call has seen.
	RequireHook bool      `json:"requireHook"`
	PathScope   PathScope `json:"pathScope"`
	Tools       Tools     `json:"tools"`
	// Secrets are files and directories the run-time layer keeps the
	// tree from reading, beyond its built-in list of the person's
	// credential stores (supervisor.DefaultSecrets): absolute, or
	// starting with ~/.
	Secrets []string `json:"secrets,omitempty"`
	// Programs are the program facts of the manifests' overlays
	// (.agents/config/programs.txt), written by agents-setup with the
	// rules, so that the shim decides with the facts the grants were
	// expanded with.
	Programs []ProgramFile `json:"programs,omitempty"`
}

// ProgramFile is one overlay's programs.txt: its path relative to the
// checkout root, and its text.
type ProgramFile struct {
	File string `json:"file"`
	Text string `json:"text"`
}

// File is a loaded config.json.
type File struct {
	// Path is the file's path as given to Load or Parse.
	Path string
	// Exists reports whether the file existed when it was loaded.
	Exists bool
	Grants Grants
	Shim   Shim

	// text is the content as read and layout where the members of the
	// objects this package writes lie in it, so that Marshal can keep the
	// keys (and the order of keys) it does not own.
	text   string
	layout layout
	// orig is Shim as decoded, so that Marshal rewrites only the user's
	// keys that were changed in memory.
	orig Shim
	// partial is set by LoadSettings: the grants and rules were not read.
	partial bool
}

// DefaultPath returns the agent's config.json: $GEMINI_CONFIG_DIR/config.json,
// else $GEMINI_HOME/config/config.json, else $HOME/.gemini/config/config.json.
func DefaultPath(getenv func(string) string) (string, error) {
	if dir := getenv("GEMINI_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, "config.json"), nil
	}
	if dir := getenv("GEMINI_HOME"); dir != "" {
		return filepath.Join(dir, "config", "config.json"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("finding config.json: none of GEMINI_CONFIG_DIR, GEMINI_HOME, HOME is set")
	}
	return filepath.Join(home, ".gemini", "config", "config.json"), nil
}

// Load reads, parses and validates (see Validate) the config file at
// path: both binaries read config.json through it or LoadSettings, so
// neither takes a file the other refuses. A missing file is not an error:
// it yields a File with Exists false and no grants. Anything but a regular
// file (a FIFO, a device), or one past statefile.MaxConfig, is an error
// naming it, read without blocking.
func Load(path string) (*File, error) {
	data, err := statefile.ReadRegular(path, statefile.MaxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	var f *File
	if len(data) == 0 {
		f, err = Parse(path, data)
	} else {
		// data is read here and never written again: the strings decoded
		// from it can share its memory instead of a copy of a few megabytes.
		f, err = parse(path, data, unsafe.String(unsafe.SliceData(data), len(data)))
	}
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// LoadSettings reads only the shim's settings of the config file at path
// (mode, shell, runtime, requireHook, pathScope, tools, profile): the grant
// lists and rules are checked as JSON but not decoded, which is what shell
// mode needs before every line. The File it returns cannot be marshalled.
func LoadSettings(path string) (*File, error) {
	data, err := statefile.ReadRegular(path, statefile.MaxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Path: path, partial: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: empty file; expected a JSON object", path)
	}
	f := &File{Path: path, Exists: true, partial: true}
	d := decoder{data: data, text: unsafe.String(unsafe.SliceData(data), len(data)), settingsOnly: true}
	if err := d.document(f); err != nil {
		return nil, decodeError(path, data, err)
	}
	f.text, f.layout = "", layout{}
	if errs := f.validateSettings(); len(errs) > 0 {
		return nil, &ValidationError{Problems: errs}
	}
	return f, nil
}

// Parse parses the content of a config file; path names it in errors.
// Syntax errors carry the line and column, wrong shapes the JSON path too.
// An empty file is an error, never an empty policy.
func Parse(path string, data []byte) (*File, error) {
	return parse(path, data, string(data))
}

// parse parses data, whose content text is, as a string that is never
// modified.
func parse(path string, data []byte, text string) (*File, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: empty file; expected a JSON object", path)
	}
	f := &File{Path: path, Exists: true, text: text}
	d := decoder{data: data, text: f.text}
	if err := d.document(f); err != nil {
		return nil, decodeError(path, data, err)
	}
	if err := checkGrants(path, f.Grants); err != nil {
		return nil, err
	}
	f.orig = f.Shim
	return f, nil
}

func checkGrants(path string, g Grants) error {
	for _, l := range []struct {
		name   string
		grants []string
	}{{"allow", g.Allow}, {"ask", g.Ask}, {"deny", g.Deny}} {
		for i, s := range l.grants {
			if strings.TrimSpace(s) == "" {
				return fmt.Errorf("%s: userSettings.globalPermissionGrants.%s[%d]: empty grant", path, l.name, i)
			}
		}
	}
	return nil
}

// decodeError names the file and the position (and for a wrong shape the
// JSON path) of a decoding error.
func decodeError(path string, data []byte, err error) error {
	switch e := err.(type) {
	case *syntaxError:
		line, col := position(data, e.offset)
		return fmt.Errorf("%s:%d:%d: %s", path, line, col, e.msg)
	case *shapeError:
		line, col := position(data, e.offset)
		return fmt.Errorf("%s:%d:%d: %s: %s", path, line, col, e.path, e.msg)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// position converts a byte offset into a 1-based line and column (in bytes).
func position(data []byte, offset int) (line, col int) {
	offset = min(offset, len(data))
	before := data[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = 1 + offset - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col
}
