// Package gate decides whether an agent's tool calls may run: shell
// commands, file reads and writes, and any other tool, through one API that
// Go agents embed and that the hook and shell front ends of agent-shim are
// thin layers over.
//
// A Gate is consulted before each tool call. Shell commands are parsed and
// decided by a command policy (package matcher); every tool call is also
// matched against the user's `tool:glob` patterns (ToolPolicy), file paths
// against a path scope (Scope), and the tool's category against the level
// of the active profile. What needs a person is asked through a Prompter;
// the answers can last for the call, the session, or always. A built-in
// never-allow list (NeverAllow) holds in every mode.
//
// The decision, for a shell command:
//
//   - a command on the never-allow list, a deny rule or a tool deny
//     pattern denies the line, in every mode;
//   - an ask rule, or a floor the matcher puts on a command (a write
//     redirection outside the scope, a program not known statically, …)
//     needs a person; write redirections inside the scope are fine when the
//     level allows writes;
//   - a command no rule matches needs a person in ModeAsk and runs in
//     ModeAllow and at LevelFullAccess;
//   - in ModeYolo everything runs but what a deny rule or the never-allow
//     list denies, or may deny when a word is not known statically, and
//     what cannot be read at all (a line that does not parse, `$CMD`,
//     `curl … | sh`), where the never-allow list cannot be checked;
//   - a tool allow pattern, or a session answer for the program (t), lifts
//     a command no rule or an ask rule matches, but never a floor; an
//     answer for the exact line (s, or a) lifts everything but a deny.
//   - a write to a protected path (the policy's own files: manifests, git
//     configuration and hooks, agents' settings, shell startup files,
//     ~/.ssh, the shim's config, state and cache; see protect.go), a write
//     whose target cannot be told, and running agent-shim or agents-setup
//     need a person in every mode and at every level; only an answer for
//     the exact line lifts that.
//
// For a file tool: a write to a block device is never allowed; a tool
// deny pattern denies (for the path as named or as resolved); a write to a
// protected path needs a person, whatever else says so; a tool allow
// pattern allows (for the resolved path);
// a path outside the scope needs a person; inside it, reads run and writes
// run from LevelLocalChanges up. Subagent tools run at every level (their
// own calls come through the same gate); other tools run at LevelFullAccess
// and in ModeAllow, else need a person.
//
// Check methods prompt and return nil or an error wrapping ErrDenied or
// ErrNeedsApproval; Decide methods return the decision without prompting,
// for front ends that answer "ask" in an agent's own protocol.
package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
)

var (
	// ErrDenied means a rule, a tool pattern, the never-allow list or the
	// person said no.
	ErrDenied = errors.New("denied")
	// ErrNeedsApproval means the call needs a person's approval and the
	// gate has no prompter to ask.
	ErrNeedsApproval = errors.New("needs approval")
)

// Mode is how much runs without asking.
type Mode int

const (
	// ModeAsk (the default) asks about everything no rule allows.
	ModeAsk Mode = iota
	// ModeAllow runs what no rule matches; ask rules still ask.
	ModeAllow
	// ModeYolo runs everything but what deny rules and the never-allow
	// list deny.
	ModeYolo
)

func (m Mode) String() string {
	switch m {
	case ModeAsk:
		return "ask"
	case ModeAllow:
		return "allow"
	case ModeYolo:
		return "yolo"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// parseMode parses "ask", "allow" or "yolo"; "" is ModeAsk.
func parseMode(s string) (Mode, error) {
	switch s {
	case "", "ask":
		return ModeAsk, nil
	case "allow":
		return ModeAllow, nil
	case "yolo":
		return ModeYolo, nil
	}
	return ModeAsk, fmt.Errorf("unknown mode %q (modes: ask, allow, yolo)", s)
}

// Level is what tool categories run without asking, from the profile.
type Level int

// The zero Level is the default profile, local-changes: what Load gives
// for a config.json without a profile, or for none at all.
const (
	// LevelReadOnly auto-approves reads inside the scope and subagents.
	LevelReadOnly Level = iota + 1
	// LevelLocalChanges adds writes inside the scope.
	LevelLocalChanges
	// LevelExternalChanges is LevelLocalChanges for the file tools; the
	// profile's command rules differ, and commands may reach other
	// machines (matcher.Policy.SetNetwork).
	LevelExternalChanges
	// LevelFullAccess adds every other tool, and shell commands no rule
	// matches.
	LevelFullAccess
)

func (l Level) String() string {
	switch l {
	case LevelReadOnly:
		return "read-only"
	case LevelLocalChanges:
		return "local-changes"
	case LevelExternalChanges:
		return "external-changes"
	case LevelFullAccess:
		return "full-access"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// LevelOf returns the level of a profile; "" is the default profile,
// local-changes.
func LevelOf(profile string) (Level, error) {
	switch profile {
	case "read-only":
		return LevelReadOnly, nil
	case "", "local-changes":
		return LevelLocalChanges, nil
	case "external-changes":
		return LevelExternalChanges, nil
	case "full-access":
		return LevelFullAccess, nil
	}
	return LevelReadOnly, fmt.Errorf("unknown profile %q (profiles: read-only, local-changes, external-changes, full-access)", profile)
}

// Options build a Gate. Every field is optional; the zero value is the gate
// Load gives for a missing config.json: ask mode, the default profile
// (local-changes), no rules (every command needs a person), an empty scope
// (so no file is read or written unasked), and nobody to ask (so
// everything that needs a person is refused with ErrNeedsApproval).
type Options struct {
	Mode  Mode
	Level Level
	// Policy decides shell commands; nil matches nothing. New copies
	// its rules (compiled only when a decision needs them) beside the
	// never-allow list; rules added later are not seen.
	Policy *matcher.Policy
	// Tools holds the user's tool:glob patterns; nil matches nothing.
	Tools *ToolPolicy
	// Scope is where file tools act freely; nil contains nothing.
	Scope *Scope
	// Dir is the directory relative paths (of file tools and of shell
	// redirections) are taken from; default the scope's first root.
	Dir string
	// Prompter asks a person; nil means nobody can be asked.
	Prompter Prompter
	// Persist saves an "always" answer as the user's own grant (see
	// Grant). Nil keeps it for the life of the Gate only.
	Persist func(tool, pattern string) error
	// Audit receives every approval as one JSON line; nil drops them.
	// Each line is written with one Write call.
	Audit io.Writer
	// Now is the clock of the approval log; default time.Now.
	Now func() time.Time
	// Session names the session in the approval log and the decision log.
	Session string
	// Decisions, when set, receives one entry (layer "gate") for every
	// decision of the Check methods, with the person's answer; Agent
	// names the host program in it. The Decide methods log nothing: a
	// host that calls them logs what it does with the decision. Use
	// decisionlog.NewWriter for the shared log.
	Decisions decisionlog.Logger
	Agent     string
	// CacheDir, used by Load only, keeps a compact copy of the policy of
	// config.json there, so that an unchanged file is not parsed again
	// on every call; "" always reads config.json. The copy decides as
	// config.json does: keep it where the agent cannot write (agent-shim
	// uses its state directory, a protected path outside every run-time
	// scope), never in a cache directory the agent's builds write.
	CacheDir string
	// Secrets are files a file tool may not even read without a person,
	// wherever the scope reaches. They are protected paths too.
	Secrets []string
	// Layer says the shell lines this gate decides will run under the
	// run-time layer (package supervisor: every execution decided, writes
	// confined below full access): what the static reading cannot see
	// into (a script of the checkout, a file written earlier on the line,
	// interpreter code, a program not known statically) is left to it,
	// and needs no person (Decision.Layered). Set it only where that is
	// known, never from the call's input: shell mode with the layer on
	// and available, a hook whose agent runs under `agent-shim run`.
	// What the layer does not decide (network, reads, servers outside
	// the tree, protected paths) is decided as without it.
	Layer bool
}

// built is what Load and Parse make of config.json: the options it
// decides, and what only the loader knows about them.
type built struct {
	Options
	// host is config.json's settings for the gate's host; shimKnown says
	// whether they were read at all (false for a gate from New).
	host      Host
	shimKnown bool
	// ownPolicy says Policy was built for this gate alone, so it may be
	// added to rather than copied; neverHeld that it holds the never-allow
	// rules already (the binary's, joined to a compact copy).
	ownPolicy, neverHeld bool
	// protected are more protected files: config.json and the copy's
	// directory.
	protected []string
	// programs is the program table of config.json's agentShim.programs
	// merged into the built-in one; nil is the built-in one.
	programs *programs.Table
}

// Gate decides tool calls. It is safe for concurrent use.
type Gate struct {
	mode     Mode
	level    Level
	policy   *matcher.Policy
	tools    *ToolPolicy
	scope    *Scope
	dir      string
	prompter Prompter
	persist  func(tool, pattern string) error
	audit    io.Writer
	now      func() time.Time
	session  string
	agent    string
	// decisions receives the Check methods' decisions; nil logs none.
	decisions decisionlog.Logger
	programs  *programs.Table // the program facts decisions use
	protect   *protector
	// host, shimKnown: see Host.
	host      Host
	shimKnown bool
	layer     bool     // Options.Layer
	secrets   []string // files not even read without a person (Options.Secrets), clean

	secretsOnce sync.Once
	realSecrets []string // secrets resolved, on first use (see isSecret)

	liftOnce sync.Once
	lift     *matcher.Policy // see allowAll

	mu        sync.Mutex
	exact     map[string]bool // canonical tool + "\x00" + key, approved for the session
	toolOK    map[string]bool // canonical tools approved for the session
	progOK    map[string]bool // shell programs approved for the session
	cmdOK     [][]string      // programs with their subcommand approved for the session (c)
	approvals []Approval
}

// New returns a gate built from opts.
func New(opts Options) *Gate { return newGate(built{Options: opts}) }

func newGate(b built) *Gate {
	opts := b.Options
	g := &Gate{
		mode:      opts.Mode,
		level:     opts.Level,
		policy:    opts.Policy,
		tools:     opts.Tools,
		scope:     opts.Scope,
		dir:       opts.Dir,
		prompter:  opts.Prompter,
		persist:   opts.Persist,
		audit:     opts.Audit,
		now:       opts.Now,
		session:   opts.Session,
		agent:     opts.Agent,
		decisions: opts.Decisions,
		layer:     opts.Layer,
		exact:     map[string]bool{},
		toolOK:    map[string]bool{},
		progOK:    map[string]bool{},
	}
	if g.level == 0 {
		g.level = LevelLocalChanges
	}
	g.policy = withNever(opts.Policy, b.ownPolicy, b.neverHeld)
	g.programs = b.programs
	if g.programs == nil {
		g.programs = programs.Builtin()
	}
	g.protect = newProtector(append(slices.Clone(b.protected), opts.Secrets...)...)
	g.host, g.shimKnown = b.host, b.shimKnown
	for _, f := range opts.Secrets {
		g.secrets = append(g.secrets, filepath.Clean(f))
	}
	if g.scope == nil {
		g.scope = NewScope()
	}
	if g.dir == "" {
		g.dir = g.scope.base()
	}
	// git, make, go test and the like run a directory's own code: the
	// matcher asks about running them outside the project.
	g.policy.SetScope(g.scope.contains)
	// Reaching other machines is what external-changes adds to the
	// commands' rules: below it, a command that does asks.
	g.policy.SetNetwork(g.level >= LevelExternalChanges)
	if g.tools == nil {
		g.tools = &ToolPolicy{root: g.dir}
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g
}

// Host are config.json's agentShim settings that the gate does not use
// itself but its host does.
type Host struct {
	Shell       string // agentShim.shell: the real shell of shell mode
	Runtime     string // agentShim.runtime: "", "on", "off" or "require"
	RequireHook bool   // agentShim.requireHook
	// Secrets is agentShim.secrets: what the run-time layer keeps the
	// tree from reading, beyond its built-in list.
	Secrets []string
}

// Host returns the host's settings as Load read them (from the file or
// its compact copy, so a host need not read config.json again), and
// whether the gate knows them: false for a gate from New. Callers that
// need the settings must then read config.json themselves.
func (g *Gate) Host() (h Host, known bool) { return g.host, g.shimKnown }

// Mode returns the gate's mode.
func (g *Gate) Mode() Mode { return g.mode }

// Layer reports whether the gate decides its lines as they run under the
// run-time layer (Options.Layer, SetLayer).
func (g *Gate) Layer() bool { return g.layer }

// SetLayer sets whether the lines the gate decides from now on run under
// the run-time layer (see Options.Layer), for a host that learns it from
// the settings the gate loaded. Call it before the gate decides anything
// concurrently.
func (g *Gate) SetLayer(on bool) { g.layer = on }

// Level returns the gate's level.
func (g *Gate) Level() Level { return g.level }

// Scope returns the gate's path scope. An "always" answer about a path
// outside it adds the path to it.
func (g *Gate) Scope() *Scope { return g.scope }

// approvalsMade returns the approvals made through this gate, oldest first.
func (g *Gate) approvalsMade() []Approval {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.approvals)
}

// Verdict is the outcome of a decision: the matcher's Decision, so that
// one enum is shared by the command policy and the gate. Its zero value is
// Default (nothing decided; a person is needed), never Allow.
type Verdict = matcher.Decision

// The verdicts, weakest first: Allow < Default < Ask < Deny (see
// matcher.Combine).
const (
	// Default means nothing decided the call and it needs a person: a
	// front end may leave it to the agent's own rules.
	Default = matcher.Default
	// Allow runs the call.
	Allow = matcher.Allow
	// Ask needs a person: a rule, the scope or a floor asks.
	Ask = matcher.Ask
	// Deny refuses the call.
	Deny = matcher.Deny
)

// Stronger reports whether a is a stronger verdict than b (Allow <
// Default < Ask < Deny); unknown values are the strongest.
func Stronger(a, b Verdict) bool { return a != b && matcher.Combine(b, a) == a }

// Decision is what the gate decided about a call, before prompting.
type Decision struct {
	Verdict Verdict
	// Reason explains the verdict in one line.
	Reason string
	// Request is what a person would be asked, when Verdict is Ask or
	// Default; nil otherwise.
	Request *Request
	// Rule is the command policy's rule that decided, with its
	// provenance (Rule.Source: category, overlay, file and line; the
	// never-allow list is overlay "builtin"); nil when something else
	// decided: a floor, a protected path, a tool pattern, the scope,
	// the mode or level, or a person's answer. Reason then names it.
	Rule *matcher.Rule
	// Floor is what held the verdict above Rule's, an allow rule (a
	// write outside the scope, a program fact, …); "" if nothing did.
	Floor string
	// Approved reports that a person approved this exact call earlier
	// (an answer for the session, or an "always" grant of it): it runs
	// as approved, under the run-time layer too.
	Approved bool
	// BySession reports that a person's answer for the session lifted
	// the call's program or tool (t): not the policy alone decided it.
	BySession bool
	// NobodyToAsk reports that the call needed a person and nobody can
	// be asked (the agent runs what it is asked about unasked): the
	// verdict is Deny.
	NobodyToAsk bool
	// Layered reports that the verdict leaves to the run-time layer what
	// the static reading could not see into ("checked as it runs"): a
	// script, code, a program not known statically, a write it confines.
	// Only for a gate whose lines run under the layer (Options.Layer),
	// and for DecideExecution.
	Layered bool
	// Covers is what approving the call covers, as data: its tool and
	// key, a line's commands, the protected paths it writes (Writes:
	// what the call may change of them once approved). Nil for a call
	// with nothing to cover (a file read, another tool). Approve makes
	// the approval of it.
	Covers *Approval
}

// Record fills the verdict, reason, rule and floor of a decision log
// entry from d: the rule as data, from the decision itself.
func (d Decision) Record(e decisionlog.Entry) decisionlog.Entry {
	e.Verdict, e.Reason = d.Verdict.String(), d.Reason
	if d.NobodyToAsk {
		// The policy asks and nobody could answer, so the call was
		// refused: recorded as shell mode records an ask nobody
		// answered, so that replay compares the policy's verdicts.
		e.Verdict = Ask.String()
		if e.Answer == "" {
			e.Answer = decisionlog.AnswerNone
		}
	}
	e.Rule, e.Floor = nil, ""
	e.Approved = d.Approved || d.BySession
	if r := d.Rule; r != nil {
		e.Rule = &decisionlog.Rule{Text: r.Text, List: r.Decision.String(), Category: r.Source.Category,
			Overlay: r.Source.Overlay, File: r.Source.File, Line: r.Source.Line}
		e.Floor = d.Floor
	} else {
		e.Floor = d.Reason
	}
	return e
}

// Check decides any tool call by the tool's category: a shell
// tool's key is its command, a file tool's key its path; for other tools
// the key is what the host wants tool patterns matched against.
func (g *Gate) Check(ctx context.Context, tool, key string) error {
	return g.check(ctx, tool, key, g.Decide(tool, key))
}

// check settles d and puts it on the decision log, with the answer when a
// person was asked.
func (g *Gate) check(ctx context.Context, tool, key string, d Decision) error {
	answer, err := g.settle(ctx, d)
	if g.decisions != nil {
		g.decisions.Log(d.Record(decisionlog.Entry{
			Time: g.now().UTC(), Agent: g.agent, Session: g.session, Layer: decisionlog.LayerGate,
			Cwd: g.dir, Tool: tool, Command: key, Answer: answer,
		}))
	}
	return err
}

// settle turns a decision into the Check result, prompting when needed;
// answer is how the person answered, "" when nobody was asked.
func (g *Gate) settle(ctx context.Context, d Decision) (answer string, err error) {
	switch d.Verdict {
	case Allow:
		return "", nil
	case Ask, Default:
	default:
		return "", fmt.Errorf("%w: %s", ErrDenied, d.Reason)
	}
	if g.prompter == nil {
		return "unanswered", fmt.Errorf("%w: %s, and nobody can be asked", ErrNeedsApproval, d.Reason)
	}
	if err := ctx.Err(); err != nil {
		return "unanswered", fmt.Errorf("asking for approval: %w", err)
	}
	a, err := g.prompter.AskApproval(ctx, *d.Request)
	if err != nil {
		return "unanswered", fmt.Errorf("asking for approval: %w", err)
	}
	if a == AnswerNo {
		return a.String(), fmt.Errorf("%w: the person said no (%s)", ErrDenied, d.Reason)
	}
	return a.String(), g.Apply(*d.Request, a)
}

// Apply records a person's answer to a request: it remembers session and
// tool answers, persists and applies an "always" answer, and logs every
// approval. Front ends that ask in their own way call it with the answer.
// AnswerNo records nothing. An error means the answer could not be kept
// (persisted or logged): the call should not run.
func (g *Gate) Apply(req Request, a Answer) error {
	if a == AnswerNo {
		return nil
	}
	if a < AnswerNo || a > AnswerCommand {
		return fmt.Errorf("applying answer: unknown answer %v", a)
	}
	tool := canonicalTool(req.Tool)
	if a == AnswerAlways {
		if g.persist != nil {
			if err := g.persist(req.Always.Tool, req.Always.Pattern); err != nil {
				return fmt.Errorf("persisting %s: %w", req.Always, err)
			}
		}
		var err error
		if req.Always.Tool == "" {
			err = g.scope.allow(req.Always.Pattern)
		} else {
			err = g.tools.addAllow(req.Always.Tool + ":" + req.Always.Pattern)
		}
		if err != nil {
			return fmt.Errorf("applying %s: %w", req.Always, err)
		}
	}
	ap := Approval{Tool: req.Tool, Key: req.Key, Decision: a.String(), Time: g.now().UTC(), Session: g.session}
	switch a {
	case AnswerTool:
		ap.Programs = req.Programs
	case AnswerCommand:
		ap.Programs = req.Commands
	}
	line, err := json.Marshal(ap)
	if err != nil {
		return fmt.Errorf("logging approval: %w", err)
	}
	line = append(line, '\n')

	g.mu.Lock()
	defer g.mu.Unlock()
	switch a {
	case AnswerSession:
		g.exact[tool+"\x00"+req.Key] = true
	case AnswerTool:
		if len(req.Programs) > 0 {
			for _, p := range req.Programs {
				g.progOK[p] = true
			}
		} else {
			g.toolOK[tool] = true
		}
	case AnswerCommand:
		for _, c := range req.Commands {
			if words := strings.Fields(c); len(words) > 0 {
				g.cmdOK = append(g.cmdOK, words)
			}
		}
	}
	g.approvals = append(g.approvals, ap)
	if g.audit != nil {
		if _, err := g.audit.Write(line); err != nil {
			return fmt.Errorf("logging approval: %w", err)
		}
	}
	return nil
}

func (g *Gate) sessionExact(t toolID, key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.exact[t.canon+"\x00"+key]
}

func (g *Gate) sessionTool(t toolID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.toolOK[t.canon]
}

// sessionCommand reports whether an answer for the session approved the
// command argv (as the rules see it) by its program and subcommand
// (AnswerCommand): argv starts with the approved words.
func (g *Gate) sessionCommand(argv []string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, words := range g.cmdOK {
		if len(argv) >= len(words) && slices.Equal(argv[:len(words)], words) {
			return true
		}
	}
	return false
}

func (g *Gate) sessionProgram(prog string) bool {
	if prog == "" {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.progOK[prog]
}

// needs returns the verdict for a call nothing allowed: Ask stays Ask,
// Default is allowed in ModeAllow and ModeYolo, and Ask too in ModeYolo.
func (g *Gate) needs(v Verdict) Verdict {
	switch {
	case g.mode == ModeYolo:
		return Allow
	case g.mode == ModeAllow && v == Default:
		return Allow
	}
	return v
}

// unreadable reports whether what cmd runs or overwrites cannot be known
// well enough to rule out the never-allow list: a program or nested script
// not known statically, or a device written through a redirection whose
// target is not.
func unreadable(cmd *shellparse.Command) bool {
	if cmd.Unknown != "" || (len(cmd.Args) > 0 && !cmd.Args[0].Static) {
		return true
	}
	for _, r := range cmd.Redirs {
		if r.Kind != shellparse.Write || r.Target.Static {
			continue
		}
		// A target starting with an expansion may be anything; one
		// starting with a literal is a path under it.
		t := strings.TrimLeft(r.Target.Text, `"'`)
		if t == "" || strings.ContainsRune("$`~{", rune(t[0])) || strings.HasPrefix(t, "/dev") {
			return true
		}
	}
	return false
}

// abs makes a path absolute against the gate's directory; "" when it
// cannot.
func (g *Gate) abs(p string) string {
	if p == "" {
		return ""
	}
	if strings.HasPrefix(p, "~") {
		h, err := expandHome(p)
		if err != nil || h == p {
			return "" // ~user, or no home: not resolved
		}
		p = h
	}
	if !filepath.IsAbs(p) {
		if g.dir == "" {
			return ""
		}
		p = g.dir + "/" + p
	}
	// Not cleaned: `..` after a link is resolved by resolve, as the
	// kernel does, not lexically.
	return p
}

func (g *Gate) decideFile(t toolID, path string, write bool) Decision {
	tool := t.name
	raw := g.abs(path)
	if raw == "" {
		return Decision{Verdict: Deny, Reason: fmt.Sprintf("%s: path %q cannot be resolved", tool, path)}
	}
	real, ok := g.scope.resolve(raw)
	if !ok {
		return Decision{Verdict: Deny, Reason: fmt.Sprintf("%s: path %s cannot be resolved (a link loop?)", tool, raw)}
	}
	abs := filepath.Clean(raw) // the path as named, for patterns and people
	what := "read"
	if write {
		what = "write"
		if dev := device(real); dev != "" {
			return Decision{Verdict: Deny, Reason: "never allowed: overwrites the device " + dev}
		}
	}
	// A deny pattern holds for the path as named and as resolved; an
	// allow pattern must hold for where the call really lands.
	tv := g.tools.match(t, real)
	if real != abs && tv != toolDeny && g.tools.match(t, abs) == toolDeny {
		tv = toolDeny
	}
	exact := g.sessionExact(t, abs) || g.tools.exactAllow(t, abs)
	guard := ""
	switch {
	case write:
		if why := g.protect.refusedState(abs, real); why != "" {
			return Decision{Verdict: Deny, Reason: why}
		}
		if why := g.protect.check(abs, real); why != "" {
			guard = "write of a protected path: " + why
		}
	case g.isSecret(abs, real):
		guard = "read of " + abs + ", a secret of the host (Options.Secrets)"
	}
	switch {
	case tv == toolDeny:
		return Decision{Verdict: Deny, Reason: fmt.Sprintf("tool pattern denies %s of %s", what, abs)}
	case guard != "" && exact:
		return Decision{Verdict: Allow, Reason: "approved", Approved: true, Covers: fileCovers(tool, abs, real, write)}
	case guard != "":
		// The policy's own files: a person decides, in every mode and
		// at every level, whatever patterns and session answers say.
		return Decision{Verdict: Ask, Reason: guard, Request: &Request{
			Kind: KindFileWrite, Tool: tool, Key: abs, Reason: guard,
			Always: Grant{Tool: t.canon, Pattern: escapeGlob(abs)},
		}, Covers: fileCovers(tool, abs, real, write)}
	case tv == toolAllow:
		return Decision{Verdict: Allow, Reason: fmt.Sprintf("tool pattern allows %s of %s", what, abs)}
	case exact:
		return Decision{Verdict: Allow, Reason: "approved", Approved: true}
	case g.sessionTool(t):
		return Decision{Verdict: Allow, Reason: tool + " approved for the session", BySession: true}
	}
	if !g.scope.containsResolved(real) {
		reason := fmt.Sprintf("%s of %s, outside the scope", what, abs)
		if real != abs {
			reason = fmt.Sprintf("%s of %s (%s), outside the scope", what, abs, real)
		}
		if g.mode == ModeYolo {
			return Decision{Verdict: Allow, Reason: reason + "; yolo mode"}
		}
		return Decision{Verdict: Ask, Reason: reason, Request: &Request{
			Kind: KindOutsideScope, Tool: tool, Key: abs, Reason: reason,
			Always: Grant{Pattern: escapeGlob(abs)},
		}}
	}
	if !write || g.level >= LevelLocalChanges {
		return Decision{Verdict: Allow, Reason: fmt.Sprintf("%s inside the scope at level %s", what, g.level)}
	}
	reason := fmt.Sprintf("write of %s at level %s", abs, g.level)
	if g.needs(Default) == Allow {
		return Decision{Verdict: Allow, Reason: reason + "; " + g.mode.String() + " mode"}
	}
	return Decision{Verdict: Default, Reason: reason, Request: &Request{
		Kind: KindFileWrite, Tool: tool, Key: abs, Reason: reason,
		Always: Grant{Tool: t.canon, Pattern: escapeGlob(abs)},
	}}
}

// Decide decides any tool call without prompting; see Check.
func (g *Gate) Decide(tool, key string) Decision { return g.decide(identify(tool), key) }

func (g *Gate) decide(t toolID, key string) Decision {
	tool := t.name
	if t.command {
		return g.explain(t, key).Decision
	}
	cat := t.cat
	switch cat {
	case catRead:
		return g.decideFile(t, key, false)
	case catWrite:
		return g.decideFile(t, key, true)
	}
	switch g.tools.match(t, key) {
	case toolDeny:
		return Decision{Verdict: Deny, Reason: "tool pattern denies " + tool}
	case toolAllow:
		return Decision{Verdict: Allow, Reason: "tool pattern allows " + tool}
	}
	switch {
	case g.sessionExact(t, key):
		return Decision{Verdict: Allow, Reason: "approved", Approved: true}
	case g.sessionTool(t):
		return Decision{Verdict: Allow, Reason: tool + " approved for the session", BySession: true}
	case cat == catSubagent:
		return Decision{Verdict: Allow, Reason: "a subagent inherits this gate"}
	case g.level == LevelFullAccess:
		return Decision{Verdict: Allow, Reason: tool + " at level full-access"}
	}
	reason := fmt.Sprintf("%s is not auto-approved at level %s", tool, g.level)
	if g.needs(Default) == Allow {
		return Decision{Verdict: Allow, Reason: reason + "; " + g.mode.String() + " mode"}
	}
	return Decision{Verdict: Default, Reason: reason, Request: &Request{
		Kind: KindOther, Tool: tool, Key: key, Reason: reason,
		Always: Grant{Tool: t.canon, Pattern: "**"},
	}}
}

// fileCovers is what approving a file tool's write of a protected path
// covers: the path, as named and as resolved.
func fileCovers(tool, abs, real string, write bool) *Approval {
	if !write {
		return nil
	}
	a := &Approval{Tool: tool, Key: abs, Writes: []string{abs}}
	if real != abs {
		a.Writes = append(a.Writes, real)
	}
	return a
}

// isSecret reports whether abs (as named) or real (resolved) is one of the
// secret files, as named or as resolved; the secrets are resolved only
// when a read is first checked, never in New.
func (g *Gate) isSecret(abs, real string) bool {
	if len(g.secrets) == 0 {
		return false
	}
	if slices.Contains(g.secrets, abs) || slices.Contains(g.secrets, real) {
		return true
	}
	g.secretsOnce.Do(func() {
		for _, f := range g.secrets {
			g.realSecrets = append(g.realSecrets, resolved(f))
		}
	})
	return slices.Contains(g.realSecrets, abs) || slices.Contains(g.realSecrets, real)
}
