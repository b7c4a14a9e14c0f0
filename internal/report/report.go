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
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/replay"
	"github.com/agent-shim/agent-shim/internal/runlayer"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
)

// Explain prints how the gate decides a line (x), under the policy
// config, as a table.
func Explain(w io.Writer, config string, x gate.Explanation) {
	if _, err := os.Stat(config); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "policy: %s does not exist: no rules, every command is default (mode %s, level %s)\n", config, x.Mode, x.Level)
	} else {
		fmt.Fprintf(w, "policy: %s (mode %s, level %s)\n", config, x.Mode, x.Level)
	}
	if x.ParseErr != nil {
		fmt.Fprintf(w, "parse error: %v\n", x.ParseErr)
	}
	if len(x.Commands) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "POS\tNESTING\tCOMMAND\tVERDICT\tRULE\tREASON")
		for _, c := range x.Commands {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Command.Pos, nesting(c.Command),
				OneLine(runlayer.ArgvString(c.Argv)), c.Verdict, OneLine(ruleString(c.Rule)), OneLine(c.Reason))
		}
		tw.Flush()
		for _, c := range x.Commands {
			if c.Fact != "" {
				fmt.Fprintf(w, "fact: %s: %s\n", OneLine(runlayer.ArgvString(c.Argv)), OneLine(c.Fact))
			}
		}
	}
	fmt.Fprintf(w, "verdict: %s (%s)\n", x.Verdict, OneLine(x.Reason))
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
	Error   string `json:"error,omitempty"`
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
}

type jsonRule struct {
	Text     string `json:"text"`
	List     string `json:"list"`
	Category string `json:"category,omitempty"`
	Overlay  string `json:"overlay,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
}

// ExplainJSON is explain's JSON object.
func ExplainJSON(config string, x gate.Explanation) any {
	out := jsonResult{Verdict: x.Verdict.String(), Reason: x.Reason, Config: config,
		Mode: x.Mode.String(), Level: x.Level.String(), Commands: []jsonCommand{}}
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

// Log prints one line per decision: time, verdict, layer, the command
// (cut to fit) and the rule or reason.
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", en.Time.UTC().Format("2006-01-02 15:04:05"), verdict, en.Layer,
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
