package secondline

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// commands returns the commands of a line as the agents' engines that
// split a line see them: the simple commands of its lists and pipelines,
// each as its words and its text. ok is false when a part is more than a
// simple command (a subshell, a loop, a redirection, a substitution…),
// which those engines read differently.
func commands(line string) (cmds []command, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, false
	}
	ok = true
	var walk func(st *syntax.Stmt)
	walk = func(st *syntax.Stmt) {
		if !ok {
			return
		}
		if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
			ok = false
			return
		}
		switch c := st.Cmd.(type) {
		case *syntax.BinaryCmd:
			walk(c.X)
			walk(c.Y)
		case *syntax.CallExpr:
			cmd := command{text: line[c.Pos().Offset():c.End().Offset()]}
			for _, a := range c.Assigns {
				if a.Value == nil || len(a.Value.Parts) != 1 {
					ok = false
					return
				}
				lit, isLit := a.Value.Parts[0].(*syntax.Lit)
				if !isLit || a.Append || a.Array != nil || a.Index != nil {
					ok = false
					return
				}
				cmd.assigns = append(cmd.assigns, a.Name.Value+"="+lit.Value)
			}
			for _, w := range c.Args {
				lit := w.Lit()
				if lit == "" || len(w.Parts) != 1 || strings.ContainsAny(lit, "*?[{\\") || strings.HasPrefix(lit, "~") && lit != "~" && !strings.HasPrefix(lit, "~/") {
					ok = false
					return
				}
				cmd.words = append(cmd.words, lit)
			}
			if len(cmd.words) == 0 {
				ok = false
				return
			}
			cmds = append(cmds, cmd)
		default:
			ok = false
		}
	}
	for _, st := range f.Stmts {
		walk(st)
	}
	return cmds, ok && len(cmds) > 0
}

// command is one simple command of a line.
type command struct {
	words   []string
	assigns []string // NAME=VALUE before the words
	text    string   // as written, assignments included
}

// Plain returns the words of a line that is one command with no shell
// syntax (no quotes, expansions, patterns, operators, redirections or
// assignments): the lines whose words every engine sees alike.
func Plain(line string) ([]string, bool) {
	cmds, ok := commands(line)
	if !ok || len(cmds) != 1 || len(cmds[0].assigns) > 0 || strings.ContainsAny(line, "\n;&|") {
		return nil, false
	}
	for _, w := range cmds[0].words {
		if strings.HasPrefix(w, "~") {
			return nil, false
		}
	}
	return cmds[0].words, true
}
