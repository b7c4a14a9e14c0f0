package setup

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/reconcile"
)

// What --dry-run and --status print is about rules, the manifest lines a
// person wrote, not the grants they expand to (a grant is a regex of a
// kilobyte or more): "+ allow  git status   (.agents/config/permissions/
// read_only.txt:7)". --json prints the full grants instead.

// maxLine bounds every line of the report.
const maxLine = 300

// ruleWidth is the column a rule's source starts at (longer lines push it).
const ruleWidth = 28

// clip shortens s to at most n bytes, ending in "…" when cut, without
// splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < len("…") {
		return ""
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// sourceText says where a rule came from.
func sourceText(r config.Rule) string {
	switch {
	case r.Source.Overlay == "ad-hoc" && r.Source.File == "":
		return "command line"
	case r.Source.Overlay == "builtin":
		return "built-in " + r.Source.File + ":" + strconv.Itoa(r.Source.Line)
	case r.Source.File == "":
		return r.Source.Overlay
	}
	return r.Source.File + ":" + strconv.Itoa(r.Source.Line)
}

// ruleLine formats one rule: sign ("+", "-" or ""), list, rule text and
// source, with a note ("3 grants") when the rule stands for several.
func ruleLine(sign, list string, r config.Rule, note string) string {
	src := sourceText(r)
	if note != "" {
		src += "; " + note
	}
	return listLine(sign, list, r.Line, src)
}

// listLine formats one line: sign, list, text and a note in parentheses.
// The text gets what the note leaves of the line.
func listLine(sign, list, text, note string) string {
	note = "(" + note + ")"
	head := "  "
	if sign != "" {
		head += sign + " "
	}
	head += fmt.Sprintf("%-6s ", list)
	text = clip(strings.ReplaceAll(text, "\n", "␤"), maxLine-len(head)-len(note)-3)
	line := head + text
	if pad := len(head) + ruleWidth - len(line); pad > 0 {
		line += strings.Repeat(" ", pad)
	}
	return clip(line+"   "+note, maxLine)
}

// grantLine formats a grant no rule names (one added to config.json by
// hand), cut to fit the line.
func grantLine(sign, list, grant string) string {
	return listLine(sign, list, grant, "grant, no rule")
}

// ruleLines returns the lines for the grants of one list: one per rule that
// names any of them (nRules), then one per grant no rule names.
func ruleLines(sign, list string, grants []string, rules []config.Rule) (out []string, nRules int) {
	if len(grants) == 0 {
		return nil, 0
	}
	in := make(map[string]bool, len(grants))
	for _, g := range grants {
		in[g] = true
	}
	named := map[string]bool{}
	for _, r := range rules {
		n := 0
		for _, g := range r.Grants {
			if in[g] {
				n++
				named[g] = true
			}
		}
		if n == 0 {
			continue
		}
		note := ""
		if n > 1 {
			note = strconv.Itoa(n) + " grants"
		}
		out = append(out, ruleLine(sign, list, r, note))
	}
	nRules = len(out)
	for _, g := range grants {
		if !named[g] {
			out = append(out, grantLine(sign, list, g))
		}
	}
	return out, nRules
}

// printChanges prints what an apply would change, per list, in rule lines
// (--dry-run).
func (s *session) printChanges(res reconcile.Result, changed bool, profile string, rules []config.Rule) {
	w := s.o.Stdout
	if s.o.JSON {
		s.printChangesJSON(w, res, changed, profile, rules)
		return
	}
	if !changed {
		fmt.Fprintf(w, "no changes to %s (profile %s)\n", s.o.display(s.configPath), profileName(profile))
		return
	}
	fmt.Fprintf(w, "would write %s (profile %s -> %s, %d rules)\n", s.o.display(s.configPath), profileName(s.file.Shim.Profile), profileName(profile), len(rules))
	added, removed := lists(&res.Added), lists(&res.Removed)
	for i, name := range listNames {
		plus, _ := ruleLines("+", name, *added[i], rules)
		minus, _ := ruleLines("-", name, *removed[i], s.file.Shim.Rules)
		fmt.Fprintf(w, "%s: +%d -%d grants\n", name, len(*added[i]), len(*removed[i]))
		for _, l := range plus {
			fmt.Fprintln(w, l)
		}
		for _, l := range minus {
			fmt.Fprintln(w, l)
		}
	}
}

// jsonRule is a rule in --json output, with its grants spelled out.
type jsonRule struct {
	Line     string        `json:"line"`
	Category string        `json:"category"`
	Source   config.Source `json:"source"`
	Grants   []string      `json:"grants"`
}

func jsonRules(rules []config.Rule) []jsonRule {
	out := make([]jsonRule, len(rules))
	for i, r := range rules {
		out[i] = jsonRule{Line: r.Line, Category: r.Category, Source: r.Source, Grants: r.Grants}
		if out[i].Grants == nil {
			out[i].Grants = []string{}
		}
	}
	return out
}

func nonNil(g config.Grants) config.Grants {
	for _, l := range lists(&g) {
		if *l == nil {
			*l = []string{}
		}
	}
	return g
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func (s *session) printChangesJSON(w io.Writer, res reconcile.Result, changed bool, profile string, rules []config.Rule) {
	writeJSON(w, struct {
		Config      string        `json:"config"`
		Changed     bool          `json:"changed"`
		FromProfile string        `json:"fromProfile"`
		Profile     string        `json:"profile"`
		Added       config.Grants `json:"added"`
		Removed     config.Grants `json:"removed"`
		Rules       []jsonRule    `json:"rules"`
	}{s.configPath, changed, s.file.Shim.Profile, profile, nonNil(res.Added), nonNil(res.Removed), jsonRules(rules)})
}

// printRules prints the rules of config.json grouped by the list their
// grants are in, with counts, then the grants no rule names (--status).
func (s *session) printRules(w io.Writer, custom config.Grants) {
	e, c := lists(&s.file.Grants), lists(&custom)
	for i, name := range listNames {
		isCustom := map[string]bool{}
		for _, g := range *c[i] {
			isCustom[g] = true
		}
		var managed []string
		for _, g := range *e[i] {
			if !isCustom[g] {
				managed = append(managed, g)
			}
		}
		lines, n := ruleLines("", name, managed, s.file.Shim.Rules)
		if len(lines) == 0 && len(*c[i]) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s: %d rules, %d custom grants\n", name, n, len(*c[i]))
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
		for _, g := range *c[i] {
			fmt.Fprintln(w, listLine("", name, g, "added by hand"))
		}
	}
}

func (s *session) printStatusJSON(w io.Writer, custom config.Grants, pending bool, unmatched int) {
	writeJSON(w, struct {
		Config  string        `json:"config"`
		Exists  bool          `json:"exists"`
		State   string        `json:"state"`
		Profile string        `json:"profile"`
		Grants  config.Grants `json:"grants"`
		Custom  config.Grants `json:"custom"`
		Rules   []jsonRule    `json:"rules"`
		// Pending: an interrupted change the next run completes or undoes.
		Pending bool `json:"pending"`
		// Unmatched counts managed digests in state.json that match no
		// grant in config.json.
		Unmatched int `json:"unmatchedDigests"`
	}{s.configPath, s.raw != nil, s.store.Dir, s.st.Profile, nonNil(s.file.Grants), nonNil(custom), jsonRules(s.file.Shim.Rules), pending, unmatched})
}
