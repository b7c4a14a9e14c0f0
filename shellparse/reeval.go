package shellparse

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file models the places where bash evaluates a value again as code,
// which the text of the line does not show: arithmetic (a variable whose
// value is `a[$(cmd)]` runs cmd when used in $(( )), (( )), let, [[ -eq ]],
// an array subscript or a ${x:off:len} slice), prompt expansion (${x@P}),
// indirection (${!x}, declare -n), builtins that assign to a name they are
// given (printf -v, read, unset, test -v) and variables that make a shell
// run a file or import a function. A command that uses one of them with a
// value that is not proven harmless is Unknown, with the reason.

// envHazard says why setting the environment variable name makes a shell
// run something the line does not show, or "" when it does not.
func envHazard(name string) string {
	switch {
	case name == "BASH_ENV" || name == "ENV":
		return "a shell runs that file first"
	case strings.HasPrefix(name, "BASH_FUNC_"):
		return "a shell imports it as a function"
	case name == "SHELLOPTS" || name == "BASHOPTS":
		return "a shell takes its options from it"
	case name == "BASH_LOADABLES_PATH":
		return "enable -f loads builtins from it"
	case name == "BASH_CMDS":
		return "it maps command names to programs"
	case name == "BASH_ALIASES":
		return "it defines aliases"
	case name == "ZDOTDIR":
		return "zsh runs its startup files from it"
	}
	return ""
}

// assignHazard checks an assignment the shell performs.
func (w *walker) assignHazard(a *syntax.Assign, p *params) string {
	name := ""
	if a.Name != nil {
		name = a.Name.Value
	}
	if why := envHazard(name); why != "" {
		return fmt.Sprintf("sets %s: %s", name, why)
	}
	if a.Index != nil && !w.assoc[name] {
		if why := w.arith(a.Index, p); why != "" {
			return why
		}
	}
	if a.Array != nil && !w.assoc[name] {
		for _, el := range a.Array.Elems {
			if el.Index != nil {
				if why := w.arith(el.Index, p); why != "" {
					return why
				}
			}
		}
	}
	if w.ints[name] && a.Value != nil {
		// declare -i x: every assignment to x is arithmetic.
		if why := w.arithWord(a.Value, p); why != "" {
			return why
		}
	}
	return ""
}

// noteAssign records what an assignment proves about a variable's value:
// a number literal or an arithmetic expansion (already checked) is a
// number.
func (w *walker) noteAssign(a *syntax.Assign) {
	if a.Name == nil {
		return
	}
	name := a.Name.Value
	if a.Value != nil && a.Index == nil && a.Array == nil && !a.Append && numericWord(a.Value) {
		w.setNum(name, true)
		return
	}
	w.setNum(name, w.ints[name] && a.Index == nil && a.Array == nil)
}

// numericWord reports a word that expands to a number: a number literal,
// or one arithmetic expansion.
func numericWord(word *syntax.Word) bool {
	if v := word.Lit(); v != "" && literal(word) {
		return isArithNumber(v)
	}
	if len(word.Parts) != 1 {
		return false
	}
	switch x := word.Parts[0].(type) {
	case *syntax.ArithmExp:
		return true
	case *syntax.DblQuoted:
		if len(x.Parts) == 1 {
			_, ok := x.Parts[0].(*syntax.ArithmExp)
			return ok
		}
	}
	return false
}

// assigning are builtins that assign to variables they name, or run code
// that may: after one, nothing stays proven.
var assigning = map[string]bool{
	"read": true, "printf": true, "mapfile": true, "readarray": true, "getopts": true,
	"unset": true, "source": true, ".": true, "eval": true, "declare": true, "typeset": true,
	"local": true, "export": true, "readonly": true, "let": true, "trap": true,
}

// afterCall forgets what a command may have changed: an assigning
// builtin, or a function the line defines.
func (w *walker) afterCall(cmd *Command) {
	if len(cmd.Args) == 0 {
		return
	}
	name := cmd.Args[0].Text
	if name == "read" && cmd.Unknown == "" {
		// Only its words name what it assigns (where it reads from
		// does not).
		lits := make([]string, len(cmd.Args)-1)
		for i, a := range cmd.Args[1:] {
			lits[i] = a.Text
			if !a.Static || a.Split {
				lits[i] = "-?"
			}
		}
		if vars, ok := readVars(lits); ok {
			for _, v := range vars {
				delete(w.nums, v)
			}
			return
		}
	}
	if !cmd.Args[0].Static || assigning[name] || w.funcs[name] {
		w.nums = nil
		w.specialsLost = true // unset RANDOM makes it a plain variable
	}
}

// lits returns the literal text of words; a word that is not plain
// literal text is "-?", which readVars refuses.
func lits(words []*syntax.Word) []string {
	out := make([]string, len(words))
	for i, w := range words {
		if out[i] = w.Lit(); out[i] == "" {
			out[i] = "-?"
		}
	}
	return out
}

// readVars returns the variables read assigns, from its literal words:
// its operands, or REPLY without one, and an -a array; ok is false for an
// option it does not know.
func readVars(args []string) (vars []string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			vars = append(vars, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			vars = append(vars, args[i:]...)
			break
		}
		for j := 1; j < len(a); j++ {
			switch c := a[j]; {
			case strings.IndexByte("ers", c) >= 0:
			case strings.IndexByte("adinNptu", c) >= 0:
				val := a[j+1:]
				if val == "" {
					if i++; i >= len(args) {
						return nil, false
					}
					val = args[i]
				}
				if c == 'a' {
					vars = append(vars, val)
				}
				j = len(a)
			default:
				return nil, false
			}
		}
	}
	if len(vars) == 0 {
		vars = append(vars, "REPLY")
	}
	return vars, true
}

// shellNumbers are the variables bash itself keeps as numbers: reading one
// in arithmetic runs nothing, until an unset (or anything that may unset)
// makes it a plain variable.
var shellNumbers = map[string]bool{"RANDOM": true, "SRANDOM": true, "SECONDS": true, "LINENO": true,
	"BASHPID": true, "PPID": true, "UID": true, "EUID": true, "EPOCHSECONDS": true}

// loopProofs keeps proven only what a loop cannot change: its body runs
// again after its own assignments. An assignment in it of anything but a
// number, or a command that may assign, unproves the variables.
func (w *walker) loopProofs(loop syntax.Node) {
	if !w.specialsLost {
		// The body runs again after what it may unset.
		syntax.Walk(loop, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.CallExpr:
				if len(x.Args) > 0 {
					name := x.Args[0].Lit()
					if _, ok := readVars(lits(x.Args[1:])); name == "read" && ok {
						break // read assigns, it does not unset
					}
					if name == "" || assigning[name] || w.funcs[name] {
						w.specialsLost = true
					}
				}
			case *syntax.DeclClause:
				w.specialsLost = true
			}
			return !w.specialsLost
		})
	}
	if len(w.nums) == 0 {
		return
	}
	if loop.End().Offset()-loop.Pos().Offset() > 16<<10 {
		w.nums = nil // not worth reading twice
		return
	}
	syntax.Walk(loop, func(n syntax.Node) bool {
		if len(w.nums) == 0 {
			return false
		}
		switch x := n.(type) {
		case *syntax.Assign:
			if x.Name != nil && (x.Value == nil || x.Index != nil || x.Array != nil || !numericWord(x.Value)) {
				delete(w.nums, x.Name.Value)
			}
		case *syntax.WordIter:
			if fc, ok := loop.(*syntax.ForClause); ok && fc.Loop == syntax.Loop(x) {
				break // the loop's own variable, proven by its items
			}
			if x.Name != nil {
				delete(w.nums, x.Name.Value)
			}
		case *syntax.CallExpr:
			if len(x.Args) > 0 {
				name := x.Args[0].Lit()
				if vars, ok := readVars(lits(x.Args[1:])); name == "read" && ok {
					for _, v := range vars {
						delete(w.nums, v)
					}
					break
				}
				if name == "" || assigning[name] || w.funcs[name] {
					w.nums = nil
				}
			}
		case *syntax.DeclClause:
			w.nums = nil
		case *syntax.FuncDecl:
			return false
		}
		return true
	})
}

func (w *walker) setNum(name string, ok bool) {
	if w.nums == nil {
		w.nums = map[string]bool{}
	}
	if ok {
		w.nums[name] = true
	} else {
		delete(w.nums, name)
	}
}

// wordHazard finds a re-evaluation point in a word outside arithmetic:
// arithmetic expansions, subscripts, slices, ${x@P} and ${!x}.
// Substitutions are not entered: their commands are reported on their own.
func (w *walker) wordHazard(n syntax.Node, p *params) string {
	why := ""
	syntax.Walk(n, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.ArithmExp:
			why = w.arith(x.X, p)
			return false
		case *syntax.ParamExp:
			why = w.paramHazard(x, p)
		}
		return why == ""
	})
	return why
}

// paramHazard checks one parameter expansion outside arithmetic.
func (w *walker) paramHazard(x *syntax.ParamExp, p *params) string {
	name := ""
	if x.Param != nil {
		name = x.Param.Value
	}
	switch {
	case x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && x.Exp.Word.Lit() == "P":
		return fmt.Sprintf("${%s@P} expands the value as a prompt, running what it holds", name)
	case x.Excl && x.Names == 0 && x.Index == nil:
		return fmt.Sprintf("${!%s} expands the variable %s names, evaluating a subscript in it", name, name)
	case x.GlobSubst == syntax.OptOn:
		return fmt.Sprintf("$~%s makes its value a glob, qualifiers included", name)
	case x.Flags != nil:
		return fmt.Sprintf("zsh expansion flags (%s) on %s", x.Flags.Value, name)
	case x.NestedParam != nil:
		return "a nested zsh parameter expansion"
	}
	if x.Index != nil && !w.assoc[name] && !wholeArray(x.Index) {
		if why := w.arith(x.Index, p); why != "" {
			return why
		}
	}
	if x.Slice != nil {
		if why := w.arith(x.Slice.Offset, p); why != "" {
			return why
		}
		if why := w.arith(x.Slice.Length, p); why != "" {
			return why
		}
	}
	return ""
}

// arith checks an arithmetic expression: every variable it reads must be
// proven to hold a plain number, and nothing else may be expanded into it.
// Plain assignments (i=0) prove their variable afterwards.
func (w *walker) arith(expr syntax.ArithmExpr, p *params) string {
	if expr == nil {
		return ""
	}
	why := ""
	var assigned []string
	syntax.Walk(expr, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.BinaryArithm:
			if x.Op == syntax.Assgn {
				if word, ok := x.X.(*syntax.Word); ok && validName(word.Lit()) && literal(word) {
					assigned = append(assigned, word.Lit())
					why = w.arith(x.Y, p)
					return false
				}
			}
		case *syntax.Word:
			why = w.arithWord(x, p)
			return false
		}
		return true
	})
	if why == "" {
		for _, name := range assigned {
			w.setNum(name, true)
		}
	}
	return why
}

// arithWord checks one operand of arithmetic.
func (w *walker) arithWord(word *syntax.Word, p *params) string {
	if len(word.Parts) == 1 {
		switch x := word.Parts[0].(type) {
		case *syntax.Lit:
			v := x.Value
			switch {
			case isArithNumber(v):
				return ""
			case validName(v) && w.nums[v]:
				return ""
			case shellNumbers[v] && !w.specialsLost:
				return ""
			case validName(v):
				return fmt.Sprintf("arithmetic evaluates the value of %s, which is not known to be a number", v)
			}
		case *syntax.ParamExp:
			if w.numericParam(x, p) {
				return ""
			}
			name := "a parameter"
			if x.Param != nil {
				name = "$" + x.Param.Value
			}
			return fmt.Sprintf("arithmetic evaluates the value of %s, which is not known to be a number", name)
		case *syntax.DblQuoted:
			if len(x.Parts) == 1 {
				if pe, ok := x.Parts[0].(*syntax.ParamExp); ok && w.numericParam(pe, p) {
					return ""
				}
			}
		}
	}
	for _, part := range word.Parts {
		if _, ok := part.(*syntax.CmdSubst); ok {
			return "arithmetic evaluates the output of a command substitution"
		}
	}
	return "arithmetic evaluates a value that is not known to be a number"
}

// numericParam reports a parameter expansion whose value is a number.
func (w *walker) numericParam(x *syntax.ParamExp, p *params) bool {
	if x.Length && x.Index == nil {
		return true // ${#x}
	}
	if x.Param == nil || x.Excl || x.Index != nil || x.Slice != nil || x.Repl != nil ||
		x.Exp != nil || x.Names != 0 || x.Flags != nil || x.NestedParam != nil || x.Length {
		return false
	}
	name := x.Param.Value
	switch name {
	case "#", "?", "$", "!":
		return true
	}
	if shellNumbers[name] {
		return !w.specialsLost
	}
	if isNumber(name) && p != nil && p.valid {
		n := 0
		for _, r := range name {
			n = n*10 + int(r-'0')
			if n > 1<<20 {
				return false
			}
		}
		if n < len(p.words) {
			return p.words[n].Static && isArithNumber(p.words[n].Text)
		}
		return true // unset: empty, which is 0
	}
	return validName(name) && w.nums[name]
}

// isArithNumber reports an integer constant as arithmetic reads it: 12,
// 0x1f, 017, 2#101, with an optional sign.
func isArithNumber(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if s == "" {
		return false
	}
	if base, digits, ok := strings.Cut(s, "#"); ok {
		if !isNumber(base) || digits == "" {
			return false
		}
		for _, r := range digits {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '@' || r == '_') {
				return false
			}
		}
		return true
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		if rest == "" {
			return false
		}
		for i := 0; i < len(rest); i++ {
			if !isHex(rest[i]) {
				return false
			}
		}
		return true
	}
	return isNumber(s)
}

// plainName reports a static word that is a variable name without a
// subscript: what printf -v, read, unset, test -v and declare -n may be
// given without evaluating anything.
func plainName(w Word) bool {
	if !w.Static {
		return false
	}
	name, sub, ok := strings.Cut(w.Text, "[")
	if ok {
		return validName(name) && strings.HasSuffix(sub, "]") && isNumber(strings.TrimSuffix(sub, "]"))
	}
	return validName(w.Text)
}

// builtinHazard checks builtins that evaluate a name or text they are
// given, or change what later commands run.
func (w *walker) builtinHazard(name string, args []Word) string {
	switch name {
	case "hash":
		for _, a := range args {
			if a.Static && strings.HasPrefix(a.Text, "-") && strings.Contains(a.Text, "p") {
				return "hash -p maps a command name to another program"
			}
		}
	case "enable":
		for _, a := range args {
			if a.Static && strings.HasPrefix(a.Text, "-") && strings.Contains(a.Text, "f") {
				return "enable -f loads a builtin from a shared object"
			}
		}
	case "printf":
		for i := 0; i < len(args); i++ {
			t := args[i].Text
			if t == "--" || !strings.HasPrefix(t, "-") {
				break
			}
			if t == "-v" && i+1 < len(args) && !plainName(args[i+1]) {
				return fmt.Sprintf("printf -v assigns to %s, evaluating its subscript", args[i+1].Text)
			}
			if strings.HasPrefix(t, "-v") && len(t) > 2 && !plainName(Word{Text: t[2:], Static: true}) {
				return fmt.Sprintf("printf -v assigns to %s, evaluating its subscript", t[2:])
			}
		}
	case "read":
		return namesHazard("read", args, "dinNptu", "a")
	case "unset":
		return namesHazard("unset", args, "", "")
	case "test", "[":
		for i, a := range args {
			if a.Static && a.Text == "-v" && i+1 < len(args) && !plainName(args[i+1]) {
				return fmt.Sprintf("test -v %s evaluates its subscript", args[i+1].Text)
			}
		}
	case "mapfile", "readarray":
		for i, a := range args {
			if a.Static && strings.HasPrefix(a.Text, "-C") {
				return name + " -C runs a callback with each line of input"
			}
			if !a.Static && i > 0 {
				break
			}
		}
	case "complete", "compgen":
		for _, a := range args {
			if a.Static && strings.HasPrefix(a.Text, "-") && strings.Contains(a.Text, "C") {
				return name + " -C runs a command to complete"
			}
		}
	case "bind":
		for _, a := range args {
			if a.Static && strings.HasPrefix(a.Text, "-") && strings.Contains(a.Text, "x") {
				return "bind -x runs a command on a key"
			}
		}
	case "fc":
		for _, a := range args {
			if a.Static && strings.HasPrefix(a.Text, "-") && strings.Contains(a.Text, "l") {
				return ""
			}
		}
		return "fc runs commands from the history"
	}
	return ""
}

// namesHazard checks the variable names a builtin assigns to: valued are
// its options taking a value, arrays those whose value is a name too.
func namesHazard(name string, args []Word, valued, arrays string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			return fmt.Sprintf("%s assigns to %s, evaluating its subscript", name, a.Text)
		}
		t := a.Text
		if t == "--" {
			for _, rest := range args[i+1:] {
				if !plainName(rest) {
					return fmt.Sprintf("%s assigns to %s, evaluating its subscript", name, rest.Text)
				}
			}
			return ""
		}
		if strings.HasPrefix(t, "-") && len(t) > 1 {
			for j := 1; j < len(t); j++ {
				switch {
				case strings.IndexByte(arrays, t[j]) >= 0:
					v := t[j+1:]
					if v == "" && i+1 < len(args) {
						i++
						if !plainName(args[i]) {
							return fmt.Sprintf("%s assigns to %s, evaluating its subscript", name, args[i].Text)
						}
					} else if v != "" && !plainName(Word{Text: v, Static: true}) {
						return fmt.Sprintf("%s assigns to %s, evaluating its subscript", name, v)
					}
					j = len(t)
				case strings.IndexByte(valued, t[j]) >= 0:
					if j+1 == len(t) {
						i++
					}
					j = len(t)
				}
			}
			continue
		}
		if !plainName(a) {
			return fmt.Sprintf("%s assigns to %s, evaluating its subscript", name, t)
		}
	}
	return ""
}

// globProgram reports a program word the shell would expand as a pattern:
// an unescaped * or ?, or a [ with a ] after it (a lone [ is the test
// command).
func globProgram(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// zshHazard finds what zsh evaluates in a word that bash reads as data:
// glob qualifiers and flags in parentheses (*(e:'cmd':), *(+func),
// (#q…)), which zsh parses into a separate part.
func zshHazard(word *syntax.Word) string {
	for _, p := range word.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.HasPrefix(l.Value, "(") {
			return fmt.Sprintf("zsh reads %s as glob qualifiers, which can run commands", l.Value)
		}
	}
	return ""
}

// wholeArray reports the subscript @ or * (${arr[@]}, ${#arr[*]}): every
// element, no arithmetic.
func wholeArray(idx syntax.ArithmExpr) bool {
	w, ok := idx.(*syntax.Word)
	if !ok {
		return false
	}
	lit := w.Lit()
	return (lit == "@" || lit == "*") && len(w.Parts) == 1
}
