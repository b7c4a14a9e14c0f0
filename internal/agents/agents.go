// Package agents holds what agent-shim knows of each AI coding agent it
// guards: where its settings are in each tier, the hook protocol in and
// out, how it wraps the commands it hands its shell, what a failed hook
// does (and the guard that makes a failure block), the trust it asks of
// a hook, the oldest release that honours the hook as installed, and its
// own directories. One file per agent (claude.go, codex.go, gemini.go)
// declares one Agent value; All lists them. Nothing outside this package
// branches on an agent's name: install, doctor, the hook and shell mode
// read the fields.
//
// Adding an agent takes one new file declaring its Agent and one entry in
// All: its name and program; its hook events, the tool that runs its
// shell commands, whether it can ask its person, and how it answers each
// verdict (answer); its user and managed settings files and the hook group
// it reads (group, Comments); whether a failed hook lets the call through
// (FailsOpen: the command gets the guard) or the agent's own switch blocks
// it (OnFailure), and the oldest release that honours it (Floor); the
// variables that move its files (Env) and its directories (stateDirs)
// with the paths in them that act later as the person (Guarded);
// what in its files turns hooks off (off), a second file install edits
// (companion), the variable that names its shell (ShellEnv) or why it has
// none (NoShell), and its shell wrapper (unwrap); its second line (Rules:
// the compiler of package secondline and where install places its
// output), the release the project proves (Proven), and how verify runs
// it headless (Headless). Install, uninstall, doctor, verify, the hook
// and shell mode need nothing else: TestAllComplete
// checks that every field each of them reads is set, so that a
// half-described agent fails there and not in the field.
//
// Antigravity has no entry: it reads config.json's grants itself (the
// policy's format is its own), and calls no hook agent-shim answers.
package agents

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agent-shim/agent-shim/internal/fileedit"
	"github.com/agent-shim/agent-shim/internal/secondline"
	"github.com/agent-shim/agent-shim/matcher"
)

// All is every agent, in the order agent-shim lists them.
var All = []*Agent{Claude, Codex, Gemini}

// ByName returns the agent named name, or nil.
func ByName(name string) *Agent {
	for _, a := range All {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Names is "claude-code|codex|gemini-cli", for synopses.
func Names(sep string) string {
	names := make([]string, len(All))
	for i, a := range All {
		names[i] = a.Name
	}
	return strings.Join(names, sep)
}

// Agent is one agent, as agent-shim meets it.
type Agent struct {
	// Name is the agent's name on agent-shim's command line
	// ("claude-code").
	Name string
	// Title is the agent's name in messages ("Claude Code").
	Title string
	// Program is the command that starts it ("claude").
	Program string

	// The hook protocol in: Pre is the event called before a tool runs,
	// Post the one after, when the shim reads it ("" when it does not).
	Pre, Post string
	// ShellTool is the tool that runs shell commands (doctor's
	// self-test calls it).
	ShellTool string
	// Asks reports whether the agent asks its person when the hook
	// answers ask. An agent that cannot is answered deny, with how to
	// approve the call.
	Asks bool
	// answer writes the hook's answer in the agent's protocol.
	answer func(w io.Writer, a Answer) error

	// User and Managed are the agent's settings tiers: the user's own
	// file, and the one a user-level write cannot override (managed by
	// root, MDM or configuration management).
	User, Managed Tier
	// Comments: the agent reads its JSON settings with // and /* */
	// comments.
	Comments bool
	// group is the hook group install writes for event, running cmd.
	group func(cmd, event string) Group

	// FailsOpen: the agent lets a call through when its hook crashes,
	// hangs or is missing, so the hook command is guarded (Guarded).
	FailsOpen bool
	// OnFailure: the handler of Pre carries the agent's own switch that
	// makes a failed hook block ("onFailure": "block").
	OnFailure bool
	// Floor is the oldest release known to honour the hook as installed
	// (zero: no floor known), read from `Program --version`.
	Floor Version
	// FloorWhat is what releases under Floor fail to honour.
	FloorWhat string
	// Upgrade is the command that installs a release at or past Floor.
	Upgrade string

	// Env are the variables that say where the agent keeps its files.
	Env []string

	// ShellEnv is the variable of the settings' "env" object that names
	// the shell the agent runs commands with ("" when it has none).
	ShellEnv string
	// NoShell says why the agent's shell cannot be agent-shim, when
	// ShellEnv is "".
	NoShell string

	// shellProbe is how the agent calls its shell, around `true`: the
	// arguments after the shell's name, and the file the call writes in
	// the temporary directory tmp; nil when ShellEnv is "".
	shellProbe func(tmp string) (args []string, writes string)
	// stateDirs are the agent's own directories.
	stateDirs func(getenv func(string) string) []string
	// Guarded are the paths of its state directories (relative; one
	// ending in "/" with all below it) that act later as the person:
	// settings, hooks, rules, MCP servers, plugins' code, trust, the
	// environment it loads. Under agent-shim run the agent writes its
	// directories but these (supervisor.Guarded).
	Guarded []string
	// companion is a second file install edits beside the user
	// settings (Codex's config.toml); nil when none.
	companion *Companion
	// off reports what in the agent's files turns its hooks off.
	off func(f *Found) []Check
	// unwrap recognises the line the agent hands its shell around a
	// command (see wrapper.go); nil when the agent has no wrapper.
	unwrap func(l *wrapperLine) (Wrapped, bool)

	// Rules is the second line: the policy compiled into the agent's own
	// rule engine, which install places beside the hook.
	Rules SecondLine
	// Proven is the release the project's end-to-end suite proves
	// (e2e/install-agents.sh); doctor suggests `agent-shim verify` for
	// any other.
	Proven Version
	// Headless is how `agent-shim verify` runs the agent.
	Headless Headless
}

// SecondLine is where an agent's own rules go (package secondline): when
// the hook is not there (turned off, broken by a release, rewritten by
// another hook), the agent's engine still refuses the never-allowed.
type SecondLine struct {
	// Compile compiles the policy into the agent's rules.
	Compile func(*secondline.Policy) secondline.Output
	// File is the rules' own file beside the tier's settings file
	// (settings; managed: the managed tier's); nil when the rules are
	// members of the settings file itself, under Member.
	File func(settings string, managed bool) string
	// Member is the settings object the rules' lists merge into (Claude
	// Code's "permissions") when File is nil.
	Member string
}

// Headless is how `agent-shim verify` runs the agent with nobody to ask,
// against a scripted model API on the loopback interface at base (package
// modelserver), in the most permissive mode it has headless: there the
// hook and the second line hold on their own.
type Headless struct {
	// Args are the program's arguments to answer prompt.
	Args func(base, prompt string) []string
	// Env are the variables it needs beside a clean environment: the
	// model's address, a placeholder key.
	Env func(base string) []string
	// Tools are the names its shell tool may have in the model's API,
	// the first offered wins; Input is that tool's input running line.
	Tools []string
	Input func(tool, line string) map[string]any
	// Prepare edits the copy of the agent's user settings (the file at
	// settings) so that it runs headless in project: sign-in by key, the
	// project trusted. nil: nothing to do.
	Prepare func(settings, project string) error
	// HooksOff turns every hook off in the copy of the user settings at
	// settings with the switch the agent gives a person (Claude Code's
	// disableAllHooks, Codex's features.hooks, Gemini CLI's
	// hooksConfig.enabled).
	HooksOff func(settings string) error
}

// RulesFile is the file install places the second line in beside the
// tier's settings file, or "" when the rules go into the settings file
// itself (Rules.Member).
func (a *Agent) RulesFile(settings string, managed bool) string {
	if a.Rules.File == nil {
		return ""
	}
	return a.Rules.File(settings, managed)
}

// Events are the events install hooks: Pre, then Post when read.
func (a *Agent) Events() []string {
	if a.Post == "" {
		return []string{a.Pre}
	}
	return []string{a.Pre, a.Post}
}

// Parse reads the agent's JSON settings file (with comments when the
// agent reads them); a duplicate key is an error naming both lines.
func (a *Agent) Parse(path string, data []byte) (*fileedit.Value, error) {
	if a.Comments {
		return fileedit.ParseJSONC(path, data)
	}
	return fileedit.ParseJSON(path, data)
}

// Group is the hook group install writes for event, running cmd.
func (a *Agent) Group(cmd, event string) Group { return a.group(cmd, event) }

// StateDirs are the agent's own directories (sessions, caches, logs and
// its settings), absolute, for the getenv given.
func (a *Agent) StateDirs(getenv func(string) string) []string { return a.stateDirs(getenv) }

// IsGuarded reports whether rel, a path relative to one of the agent's
// directories, lies on one of its Guarded paths (a guarded directory
// itself included).
func (a *Agent) IsGuarded(rel string) bool {
	for _, g := range a.Guarded {
		if rel == strings.TrimSuffix(g, "/") || strings.HasSuffix(g, "/") && strings.HasPrefix(rel, g) {
			return true
		}
	}
	return false
}

// ShellProbe is how the agent calls its shell, around `true`: the
// arguments after the shell's name, and the file the call writes in the
// temporary directory tmp (TMPDIR). ok is false for an agent whose shell
// cannot be agent-shim.
func (a *Agent) ShellProbe(tmp string) (args []string, writes string, ok bool) {
	if a.shellProbe == nil {
		return nil, "", false
	}
	args, writes = a.shellProbe(tmp)
	return args, writes, true
}

// Companion is the agent's second file beside its user settings, or nil.
func (a *Agent) Companion() *Companion { return a.companion }

// Off reports the settings in f that turn the agent's hooks off.
func (a *Agent) Off(f *Found) []Check {
	if a.off == nil {
		return nil
	}
	return a.off(f)
}

// Tier is one tier of an agent's settings.
type Tier struct {
	// Path is the tier's file for the environment getenv reads.
	Path func(getenv func(string) string) (string, error)
	// DropIn says the tier is a directory of drop-in files (Path's): any
	// *.json file there is of the tier.
	DropIn bool
	// Caveat is what the tier cannot hold, said after install.
	Caveat string
	// OKDetail is doctor's word on a hook in this tier.
	OKDetail string
	// toml edits a tier kept in TOML (Codex's requirements.toml); nil
	// for a JSON tier, whose hook groups install edits itself.
	toml *tomlTier
	// pin and unpin are edits install makes beside the hook groups, in
	// the same write (Gemini CLI's hooksConfig.enabled), noting in rec
	// what they added; nil when none.
	pin, unpin func(path string, data []byte, rec *Record) ([]byte, error)
	// disabled reports what in a user file (path, data) turns off a hook
	// of this tier even so, and how to fix it; "" when nothing does.
	disabled func(path string, data []byte) (why, fix string)
}

// tomlTier is a tier whose file is TOML.
type tomlTier struct {
	set   func(path string, data []byte, cmd string) ([]byte, error)
	unset func(path string, data []byte) ([]byte, error)
	// hooks returns the file's hooks as a JSON document of the
	// hooks.json shape, for doctor.
	hooks func(path string, data []byte) ([]byte, error)
}

// Holds reports whether the file at path is of the tier (getenv: where
// the agent looks): its file, or a drop-in beside it.
func (t *Tier) Holds(path string, getenv func(string) string) bool {
	p, err := t.Path(getenv)
	if err != nil {
		return false
	}
	path, p = filepath.Clean(path), filepath.Clean(p)
	return path == p || t.DropIn && filepath.Dir(path) == filepath.Dir(p) && filepath.Ext(path) == ".json"
}

// TOML reports whether the tier's file is TOML.
func (t *Tier) TOML() bool { return t.toml != nil }

// SetTOML makes a TOML tier's file hold exactly one hook of ours, running
// cmd.
func (t *Tier) SetTOML(path string, data []byte, cmd string) ([]byte, error) {
	return t.toml.set(path, data, cmd)
}

// UnsetTOML takes every hook of ours out of a TOML tier's file.
func (t *Tier) UnsetTOML(path string, data []byte) ([]byte, error) { return t.toml.unset(path, data) }

// HooksJSON returns a TOML tier's hooks as a JSON document of the
// hooks.json shape.
func (t *Tier) HooksJSON(path string, data []byte) ([]byte, error) { return t.toml.hooks(path, data) }

// Pin makes the edits the tier needs beside the hook groups.
func (t *Tier) Pin(path string, data []byte, rec *Record) ([]byte, error) {
	if t.pin == nil {
		return data, nil
	}
	return t.pin(path, data, rec)
}

// Unpin undoes Pin, as rec notes it.
func (t *Tier) Unpin(path string, data []byte, rec *Record) ([]byte, error) {
	if t.unpin == nil {
		return data, nil
	}
	return t.unpin(path, data, rec)
}

// Disabled reports what in the user's file (path, data) turns a hook of
// this tier off even so, and how to fix it; "" when nothing does.
func (t *Tier) Disabled(path string, data []byte) (why, fix string) {
	if t.disabled == nil || data == nil {
		return "", ""
	}
	return t.disabled(path, data)
}

// Group is a hook group of the agents' settings: a matcher and handlers.
type Group struct {
	Matcher string    `json:"matcher,omitempty"`
	Hooks   []Handler `json:"hooks"`
}

// Handler is one command a hook group runs.
type Handler struct {
	Type      string `json:"type"`
	Name      string `json:"name,omitempty"`
	Command   string `json:"command"`
	Timeout   int    `json:"timeout"`
	OnFailure string `json:"onFailure,omitempty"`
}

// HookTimeout is the hook's timeout in seconds: generous, since a hook
// killed on a timeout lets the call through.
const HookTimeout = 30

// Answer is a decision as the hook answers it: the verdict, the reason
// the agent shows, and how a person would approve the call (for a verdict
// that needs one).
type Answer struct {
	Verdict matcher.Decision
	Reason  string
	Hint    string
}

// Answer writes the hook's answer to a in the agent's protocol.
func (a *Agent) Answer(w io.Writer, ans Answer) error { return a.answer(w, ans) }

// Version is a release number: major, minor, patch.
type Version [3]int

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// IsZero reports whether v is no version.
func (v Version) IsZero() bool { return v == Version{} }

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// ParseVersion reads "1.2.3".
func ParseVersion(s string) (Version, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Version{}, false
	}
	var v Version
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Version{}, false
		}
		v[i] = n
	}
	return v, true
}

// Status is a check's outcome.
type Status string

// Check statuses.
const (
	OK   Status = "ok"
	Info Status = "info"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Check is one thing doctor checked, and the command that fixes it.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Found is an agent's settings as doctor found them.
type Found struct {
	// Path, Data and Root are the file whose hook guards the agent: the
	// managed tier's when it holds ours, else the user's.
	Path string
	Data []byte
	Root *fileedit.Value
	// UserPath and UserData are the user tier's file (nil: none).
	UserPath string
	UserData []byte
	// Managed: the hook is in the managed tier.
	Managed bool
	// Fix is the command that installs the hook again.
	Fix    string
	Getenv func(string) string
}

// Record is what one install added to an agent's files beyond its hook
// groups, so that uninstall takes out exactly that. It is kept in
// $XDG_STATE_HOME/agent-shim/installs.json.
type Record struct {
	Agent    string `json:"agent"`
	Settings string `json:"settings"`
	// SettingsCreated: install created the settings file.
	SettingsCreated bool     `json:"settingsCreated,omitempty"`
	Created         []string `json:"created,omitempty"` // objects install created: "hooks", "hooks.PreToolUse", "env"
	// The shell variable in "env" (ShellEnv): set by install, and what
	// it was before, if anything.
	ShellEnv     bool    `json:"shellEnv,omitempty"`
	PrevShellEnv *string `json:"prevShellEnv,omitempty"`
	Link         string  `json:"link,omitempty"` // the shell link install made
	// The companion file (Codex's config.toml), and what install did to it.
	Config        string  `json:"config,omitempty"`
	ConfigCreated bool    `json:"configCreated,omitempty"`
	FeaturesAdded bool    `json:"featuresAdded,omitempty"` // the [features] table
	FlagLine      string  `json:"flagLine,omitempty"`      // set when install set features.hooks
	PrevFlag      string  `json:"prevFlag,omitempty"`      // the value it replaced
	PrevFlagLine  *string `json:"prevFlagLine,omitempty"`  // an older install's: the line it replaced
	// The trust install wrote for the hook: hooks.state key, hash, and
	// the trusted_hash it replaced.
	TrustKey  string `json:"trustKey,omitempty"`
	TrustHash string `json:"trustHash,omitempty"`
	PrevTrust string `json:"prevTrust,omitempty"`
	// The second line: the file install wrote it to and the sha256 of
	// what it wrote (a file changed since is left), or the entries it
	// added to the settings' lists (Rules.Member: list name → entries;
	// the objects it made for them are in Created).
	RulesFile  string              `json:"rulesFile,omitempty"`
	RulesHash  string              `json:"rulesHash,omitempty"`
	RulesDir   bool                `json:"rulesDir,omitempty"` // install made the file's directory
	RulesAdded map[string][]string `json:"rulesAdded,omitempty"`
}

// Companion is a file install edits beside an agent's user settings, in
// a write of its own (Codex's config.toml: the hooks feature and the
// trust of the hook).
type Companion struct {
	// Path is the companion of the settings file at settings.
	Path func(settings string) string
	// Check makes, without writing them, the edits Set will make to
	// the file at path: install stops before it writes anything when
	// they cannot be made.
	Check func(path string) error
	// Set edits data, the companion's content, for the hook installed
	// in settings (settingsData), recording in rec what it changed;
	// notes say what it did, for people.
	Set func(getenv func(string) string, path string, data []byte, settings string, settingsData []byte, rec *Record) (out []byte, notes []string, err error)
	// Unset undoes Set as rec records it.
	Unset func(path string, data []byte, rec *Record) ([]byte, error)
	// UnsetNote says what Unset undid.
	UnsetNote string
	// Checks reports what doctor checks in the companion (content data,
	// nil when there is none) for the settings of f.
	Checks func(f *Found, data []byte) []Check
	// trust carries the person's trust of the hook over to verify's
	// copy (see CopyTrust); nil when the agent asks none.
	trust func(fromGetenv func(string) string, from string, fromData, fromCompanion []byte,
		getenv func(string) string, path string, data []byte, settings string, settingsData []byte) ([]byte, error)
}
