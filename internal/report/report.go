// Package report prints what agent-shim's commands show: explain's
// table and JSON, the decision log's lines, replay's changes and
// recommend's suggestions, in text for people and JSON for programs.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/replay"
	"github.com/agent-shim/agent-shim/internal/runlayer"
	"github.com/agent-shim/agent-shim/internal/sessions"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
)

// ExplainOptions say how explain's table is printed.
type ExplainOptions struct {
	// Wide prints every column whole (the nesting, the rule that
	// matched with its category, the reason), however wide; otherwise
	// the table fits Width columns.
	Wide bool
	// Width is the table's width when not Wide; 0 is 100.
	Width int
	// Layer is the run-time layer where explain runs.
	Layer Layer
	// Approve says how to allow the line for good when it asks ("":
	// nothing to say). It is printed whole: it is what to type.
	Approve string
}

// Layer says whether the run-time layer runs an allowed line here.
type Layer struct {
	State  string `json:"state"` // "on", "off" or "unavailable"
	Detail string `json:"detail"`
}

// LayerState is the run-time layer's state from config.json's
// agentShim.runtime (setting) and what the kernel has (ok, why: see
// supervisor.Available).
func LayerState(setting string, ok bool, why string) Layer {
	switch {
	case setting == "off":
		return Layer{"off", "agentShim.runtime is off: an allowed line runs as it is, the static check stands alone"}
	case ok:
		return Layer{"on", "every program an allowed line runs is decided, its writes confined; " + why}
	case setting == "require":
		return Layer{"unavailable", why + "; agentShim.runtime is require: shell mode refuses every line"}
	}
	return Layer{"unavailable", why + "; the static check stands alone"}
}

// Explain prints how the gate decides a line (x), under the policy
// config, as a table: one row per command, with the rule or the reason
// that decided it (never both: the reason of a rule's verdict is the
// rule), then the writes the level let through, the program facts that
// made a verdict stricter, and the line's verdict.
func Explain(w io.Writer, config string, x gate.Explanation, o ExplainOptions) {
	width := o.Width
	if width <= 0 {
		width = 100
	}
	if o.Wide {
		width = 0
	}
	if _, err := os.Stat(config); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "policy: %s does not exist: no rules, every command is default (mode %s, level %s); agents-setup writes it\n", config, x.Mode, x.Level)
	} else {
		fmt.Fprintf(w, "policy: %s (mode %s, level %s)\n", config, x.Mode, x.Level)
	}
	if o.Layer.State != "" {
		fit(w, width, "run-time layer: %s: %s", o.Layer.State, o.Layer.Detail)
	}
	if x.Layer {
		fit(w, width, "reading: as the line runs under the run-time layer (what the static reading cannot see into is checked as it runs)")
	}
	if x.ParseErr != nil {
		fmt.Fprintf(w, "parse error: %v\n", x.ParseErr)
	}
	if len(x.Commands) > 0 {
		var rows [][]string
		if o.Wide {
			rows = append(rows, []string{"POS", "NESTING", "COMMAND", "VERDICT", "RULE", "REASON"})
			for _, c := range x.Commands {
				reason := "-"
				if c.Decider == nil {
					reason = OneLine(c.Reason)
				}
				rows = append(rows, []string{c.Command.Pos.String(), nesting(c.Command),
					OneLine(runlayer.ArgvString(c.Argv)), c.Verdict.String(), OneLine(ruleString(c.Rule)), reason})
			}
		} else {
			rows = append(rows, []string{"COMMAND", "VERDICT", "WHY"})
			for _, c := range x.Commands {
				cmd := OneLine(runlayer.ArgvString(c.Argv))
				if len(c.Command.Nesting) > 0 {
					cmd = nesting(c.Command) + " › " + cmd
				}
				why := OneLine(c.Reason)
				if c.Decider != nil {
					why = shortRule(c.Decider)
				}
				rows = append(rows, []string{cmd, c.Verdict.String(), why})
			}
		}
		table(w, rows, width)
		for _, c := range x.Commands {
			if len(c.InScope) > 0 && c.Protected == "" { // a protected path's write is no write the level lets through
				fit(w, width, "writes %s (%s, %s): inside the scope, which level %s lets it write",
					strings.Join(c.InScope, ", "), c.Command.Pos, OneLine(runlayer.ArgvString(c.Argv)), x.Level)
			}
		}
		for _, c := range x.Commands {
			if c.Fact != "" {
				fit(w, width, "fact: %s (%s, %s)", OneLine(c.Fact), c.Command.Pos, OneLine(runlayer.ArgvString(c.Argv)))
			}
		}
	}
	if x.Rule != nil && x.Floor == "" && x.Verdict != gate.Allow && !o.Wide {
		fit(w, width, "verdict: %s, by rule %s", x.Verdict, shortRule(x.Rule))
	} else {
		fit(w, width, "verdict: %s (%s)", x.Verdict, OneLine(x.Reason))
	}
	if x.Verdict != gate.Ask && x.Verdict != gate.Default {
		return
	}
	switch {
	case x.Covers != nil && len(x.Covers.Writes) > 0:
		// No grant lifts a protected path: only a person's answer for
		// the exact line does.
		fit(w, width, "it writes a protected path (%s): no grant allows that, only a person's answer for this very line", strings.Join(x.Covers.Writes, ", "))
	case o.Approve != "":
		fmt.Fprintln(w, OneLine(o.Approve))
	}
}

// fit prints one line, cut to width runes (0: whole).
func fit(w io.Writer, width int, format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if width > 0 {
		line = Truncate(line, width)
	}
	fmt.Fprintln(w, line)
}

// table prints rows as columns two spaces apart. With a width, the
// columns that do not fit are cut: the last one first, then the widest,
// down to a third of the line each.
func table(w io.Writer, rows [][]string, width int) {
	n := len(rows[0])
	widths := make([]int, n)
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	if width > 0 {
		floor := width / 3
		for over := sum(widths) + 2*(n-1) - width; over > 0; over = sum(widths) + 2*(n-1) - width {
			// The widest column past the floor gives way; the last one
			// (the reason) first when it is as wide.
			j := -1
			for i := n - 1; i >= 0; i-- {
				if widths[i] > floor && (j < 0 || widths[i] > widths[j]) {
					j = i
				}
			}
			if j < 0 {
				break // nothing left to cut: the short columns alone are wider
			}
			widths[j] -= min(over, widths[j]-floor)
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			cell = Truncate(cell, widths[i])
			b.WriteString(cell)
			if i < n-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

func nesting(c *shellparse.Command) string {
	if len(c.Nesting) == 0 {
		return "-"
	}
	kinds := make([]string, len(c.Nesting))
	for i, f := range c.Nesting {
		kinds[i] = f.Kind
	}
	return strings.Join(kinds, " › ")
}

// ruleString is a rule with where it came from, whole: its list, text,
// file and line, overlay and category.
func ruleString(r *matcher.Rule) string {
	if r == nil {
		return "no rule"
	}
	s := r.Decision.String() + " `" + r.Text + "`"
	var from []string
	if src := r.Source.String(); src != "" {
		from = append(from, src)
	}
	if r.Source.Overlay != "" && r.Source.Overlay != "." && r.Source.File == "" {
		from = append(from, "overlay "+r.Source.Overlay)
	}
	if r.Source.Category != "" {
		from = append(from, r.Source.Category)
	}
	if len(from) == 0 {
		from = append(from, "config.json "+r.Decision.String()+" list")
	}
	return s + " (" + strings.Join(from, ", ") + ")"
}

// shortRule is a rule and where it came from, short: the manifest's
// file name and line, and the overlay when it is not the checkout's
// own (vendor/x, built-in).
func shortRule(r *matcher.Rule) string {
	s := "`" + r.Text + "`"
	src := r.Source
	if src.File == "" {
		if src.Overlay != "" && src.Overlay != "." {
			return s + " (" + src.Overlay + ")"
		}
		return s + " (config.json " + r.Decision.String() + " list)"
	}
	where := path.Base(src.File)
	if src.Line > 0 {
		where += ":" + strconv.Itoa(src.Line)
	}
	switch {
	case strings.HasPrefix(src.File, "<builtin>"):
		where = "built-in " + where
	case src.Overlay != "" && src.Overlay != ".":
		where = src.Overlay + " " + where
	}
	return s + " (" + where + ")"
}

// OneLine keeps a table row on one line.
func OneLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
}

type jsonResult struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	Config  string `json:"config"`
	Mode    string `json:"mode"`
	Level   string `json:"level"`
	// Layer is the run-time layer where explain ran.
	Layer *Layer `json:"runtimeLayer,omitempty"`
	// Runtime says the line was read as it runs under the run-time
	// layer (explain --runtime); CheckedAsItRuns that the verdict leaves
	// to the layer what the static reading could not see into.
	Runtime         bool   `json:"runtime,omitempty"`
	CheckedAsItRuns bool   `json:"checkedAsItRuns,omitempty"`
	Error           string `json:"error,omitempty"`
	// Writes are the protected paths the line writes, as named and
	// resolved: what approving it lets the line change of them.
	Writes []string `json:"writes,omitempty"`
	// NeverAllow is the first rule or shape of the built-in never-allow
	// list that applies to a command of the line.
	NeverAllow string        `json:"neverAllow,omitempty"`
	Commands   []jsonCommand `json:"commands"`
}

type jsonCommand struct {
	Pos     string   `json:"pos"`
	Nesting []string `json:"nesting"`
	Source  string   `json:"source"`
	Argv    []string `json:"argv"`
	Static  bool     `json:"static"`
	Verdict string   `json:"verdict"`
	// Matcher is the command policy's verdict before mode, level, tool
	// patterns, scope and the built-in lists.
	Matcher    string    `json:"matcher"`
	Rule       *jsonRule `json:"rule"`
	Reason     string    `json:"reason"`
	NeverAllow string    `json:"neverAllow,omitempty"`
	Protected  string    `json:"protected,omitempty"`
	Tool       string    `json:"toolPattern,omitempty"`
	InScope    []string  `json:"inScope,omitempty"`
	// Fact is the program fact that made the verdict stricter.
	Fact string `json:"fact,omitempty"`
	// CheckedAsItRuns: the run-time layer decides what the static
	// reading could not see into (explain --runtime).
	CheckedAsItRuns bool `json:"checkedAsItRuns,omitempty"`
}

type jsonRule struct {
	Text     string `json:"text"`
	List     string `json:"list"`
	Category string `json:"category,omitempty"`
	Overlay  string `json:"overlay,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
}

// ExplainJSON is explain's JSON object; layer is left out when its state
// is not known.
func ExplainJSON(config string, x gate.Explanation, layer Layer) any {
	out := jsonResult{Verdict: x.Verdict.String(), Reason: x.Reason, Config: config,
		Mode: x.Mode.String(), Level: x.Level.String(), Runtime: x.Layer, CheckedAsItRuns: x.Layered, Commands: []jsonCommand{}}
	if layer.State != "" {
		out.Layer = &layer
	}
	if x.ParseErr != nil {
		out.Error = x.ParseErr.Error()
	}
	if x.Covers != nil {
		out.Writes = x.Covers.Writes
	}
	for _, c := range x.Commands {
		jc := jsonCommand{
			Pos:        c.Command.Pos.String(),
			Nesting:    []string{},
			Source:     c.Command.Source,
			Argv:       c.Argv,
			Static:     c.Command.Static(),
			Verdict:    c.Verdict.String(),
			Matcher:    c.Matcher.String(),
			Reason:     c.Reason,
			NeverAllow: c.NeverAllow,
			Protected:  c.Protected,
			InScope:    c.InScope,
			Fact:       c.Fact,

			CheckedAsItRuns: c.Layered,
		}
		jc.Tool = c.Tool
		if out.NeverAllow == "" {
			out.NeverAllow = c.NeverAllow
		}
		if jc.Argv == nil {
			jc.Argv = []string{}
		}
		for _, n := range c.Command.Nesting {
			jc.Nesting = append(jc.Nesting, n.Kind)
		}
		if r := c.Rule; r != nil {
			jc.Rule = &jsonRule{Text: r.Text, List: r.Decision.String(),
				Category: r.Source.Category, Overlay: r.Source.Overlay, File: r.Source.File, Line: r.Source.Line}
		}
		out.Commands = append(out.Commands, jc)
	}
	return out
}

// JSON prints v as indented JSON and a newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Log prints one line per decision: time, verdict, layer (marked when
// agent-shim run took it from its tree), the command (cut to fit) and the
// rule or reason.
func Log(w io.Writer, entries []decisionlog.Entry) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, en := range entries {
		why := en.Rule.String()
		if why == "" {
			why = en.Reason
		}
		verdict := en.Verdict
		if en.Answer != "" {
			verdict += "→" + en.Answer
		}
		layer := en.Layer
		if en.Tree {
			layer += " (run's tree)" // the tree's word: Entry.Tree
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", en.Time.UTC().Format("2006-01-02 15:04:05"), verdict, layer,
			Truncate(OneLine(en.Command), 60), OneLine(why))
	}
	tw.Flush()
}

// Truncate cuts s to n runes, marking the cut.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Since reads --since: a duration back from now (Go's, or N days as
// 7d), or a date or time.
func Since(s string, now time.Time) (time.Time, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (24h, 7d) nor a time (2006-01-02, 2006-01-02T15:04:05Z)", s)
}

// Replay prints the verdicts that change.
func Replay(w io.Writer, r *replay.Result) {
	fmt.Fprintf(w, "replayed %d decisions", r.Replayed)
	if r.Skipped > 0 {
		fmt.Fprintf(w, " (%d skipped: not a shell command, or decided by a session's answer)", r.Skipped)
	}
	fmt.Fprintln(w)
	if len(r.Changes) == 0 {
		fmt.Fprintln(w, "no verdict changes")
		return
	}
	total := 0
	for _, c := range r.Changes {
		total += c.Count
	}
	fmt.Fprintf(w, "%d verdicts change:\n", total)
	for _, c := range r.Changes {
		how := "narrower"
		if replay.Widens(c.From, c.To) {
			how = "WIDER"
		}
		fmt.Fprintf(w, "  %-7s → %-7s %5d  (%s)\n", c.From, c.To, c.Count, how)
	}
	fmt.Fprintln(w)
	for _, c := range r.Commands {
		fmt.Fprintf(w, "%s → %s  ×%d  %s\n", c.From, c.To, c.Count, Truncate(OneLine(c.Command), 80))
		fmt.Fprintf(w, "    was: %s\n    now: %s\n", OneLine(c.Was), OneLine(c.Now))
	}
}

// Recommendations prints the suggested grants, from n approvals in logPath.
func Recommendations(w io.Writer, logPath string, n int, recs []approvals.Recommendation) {
	if len(recs) == 0 {
		fmt.Fprintf(w, "no recommendation from %d approvals in %s\n", n, logPath)
		return
	}
	for _, r := range recs {
		fmt.Fprintf(w, "%s\n  %s\n", r.Grant, r.Reason)
		for _, ev := range r.Evidence {
			fmt.Fprintf(w, "  approved: %s\n", OneLine(ev))
		}
	}
}

// Verdicts reads --verdict: verdicts separated by commas; none is all.
func Verdicts(list string) (map[string]bool, error) {
	want := map[string]bool{}
	for _, v := range strings.Split(list, ",") {
		switch v = strings.TrimSpace(v); v {
		case "":
		case "allow", "ask", "deny", "default":
			want[v] = true
		default:
			return nil, fmt.Errorf("unknown verdict %q (verdicts: allow, ask, deny, default)", v)
		}
	}
	return want, nil
}

// Select keeps the entries since from (zero: all) with one of the
// verdicts want (none: all), the last n of them (0: all).
func Select(entries []decisionlog.Entry, from time.Time, want map[string]bool, n int) []decisionlog.Entry {
	var out []decisionlog.Entry
	for _, en := range entries {
		if !from.IsZero() && en.Time.Before(from) || len(want) > 0 && !want[en.Verdict] {
			continue
		}
		out = append(out, en)
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// OneShots prints one-shot approvals, one a line.
func OneShots(w io.Writer, list []approvals.OneShot) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tASKED\tAGENT\tTOOL\tCALL\tIN\tWHY")
	for _, o := range list {
		state := "pending"
		if !o.Pending() {
			state = "approved"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o.ID, state, o.Asked.Local().Format(time.Kitchen), o.Agent, o.Tool,
			Truncate(OneLine(o.Key), 80), o.Dir, Truncate(OneLine(o.Reason), 80))
	}
	tw.Flush()
}

// SessionAnswers prints the answers given for a session, one a line,
// each with what it approves.
func SessionAnswers(w io.Writer, grants []sessions.Grant) {
	if len(grants) == 0 {
		fmt.Fprintln(w, "no session answers")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSESSION\tANSWER\tTOOL\tAPPROVES")
	for _, g := range grants {
		what := Truncate(OneLine(g.Key), 80)
		switch g.Decision {
		case gate.AnswerTool.String():
			what = "every call of " + g.Tool
			if len(g.Programs) > 0 {
				what = "every " + strings.Join(g.Programs, ", ") + " command"
			}
		case gate.AnswerCommand.String():
			what = "every `" + strings.Join(g.Programs, " …`, `") + " …` command"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", g.ID, g.Session, g.Decision, g.Tool, what)
	}
	tw.Flush()
}

// ExplainTool prints the decision of one call of a tool that is not a
// shell (explain --tool): the policy, the tool, the rule that decided.
func ExplainTool(w io.Writer, config, tool string, d gate.Decision, asJSON bool) error {
	rule := ""
	if d.Rule != nil {
		rule = d.Rule.Text
		if src := d.Rule.Source; src.File != "" {
			rule += fmt.Sprintf(" (%s:%d)", src.File, src.Line)
		}
	}
	if asJSON {
		return JSON(w, map[string]any{"config": config, "tool": tool, "verdict": d.Verdict.String(), "reason": d.Reason, "rule": rule})
	}
	fmt.Fprintf(w, "policy: %s\ntool: %s\n", config, tool)
	if rule != "" {
		fmt.Fprintf(w, "rule: %s\n", rule)
	}
	fmt.Fprintf(w, "verdict: %s (%s)\n", d.Verdict, d.Reason)
	return nil
}

// NonNil is s, or an empty slice: JSON [] rather than null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
