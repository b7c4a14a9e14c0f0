package programs

import (
	"slices"
	"strings"
)

// WriteTargets returns the paths a command writes according to the
// built-in table: the destination of cp, mv, ln, install and rsync, the
// files of tee, touch, mkdir, rm and sed -i, the values of -o FILE,
// --output=FILE and the like. unknown is set when the command writes but
// the table cannot say where (find -delete, tar -x). argv is the whole
// command, program first, after runners are unwrapped; redirections are
// not part of it.
func WriteTargets(argv []string) (paths []string, unknown bool) {
	return Builtin().WriteTargets(argv)
}

// WriteTargets is the package function for a table of one's own.
func (t *Table) WriteTargets(argv []string) (paths []string, unknown bool) {
	if len(argv) == 0 {
		return nil, false
	}
	args := make([]Arg, len(argv)-1)
	for i, a := range argv[1:] {
		args[i] = Arg{Text: a, Static: true}
	}
	_, b, rest := t.Resolve(argv[0], args)
	if b == nil {
		return nil, false
	}
	// The subcommand words are operands of the split, not targets.
	skip := 0
	if b.parent != nil {
		skip = strings.Count(b.Key, " ")
	}
	toks := b.Split(rest)
	var operands []string
	writesOperands, wroteByOption, archive := false, false, false
	archivePath, archiveKnown := "", false
	scriptGiven := false
	script := b.ScriptFact()
	for _, tok := range toks {
		switch tok.Kind {
		case Operand:
			if tok.Arg < skip {
				continue
			}
			w := rest[tok.Arg].Text
			if effects, v := b.Shape(w); effects != nil {
				for _, e := range effects {
					if e.Kind == Write || e.Kind == Output {
						paths = append(paths, v)
					}
				}
				continue
			}
			operands = append(operands, w)
		case Option:
			if tok.Opt == nil {
				continue
			}
			if slices.Contains(tok.Opt.Canon, "file") && tok.HasValue {
				archivePath, archiveKnown = tok.Value, true
			}
			if script != nil && scriptOption(script.Arg, tok.Name) {
				scriptGiven = true
			}
			for _, e := range tok.Opt.Effects {
				if !e.Applies(tok.Value, tok.ValueStatic) {
					continue
				}
				switch e.Kind {
				case Write, Output:
					wroteByOption = true
					if tok.HasValue {
						paths = append(paths, tok.Value)
					} else {
						unknown = true
					}
				case Writes:
					switch e.Mode {
					case "operands":
						writesOperands = true
					case "unknown":
						unknown = true
					case "archive":
						archive = true
					}
				}
			}
		}
	}
	if archive {
		if archiveKnown && archivePath != "-" {
			paths = append(paths, archivePath)
		} else if !archiveKnown {
			unknown = true
		}
	}
	if script != nil && !scriptGiven && len(operands) > 0 {
		operands = operands[1:]
	}
	mode := ""
	if f := b.TargetsFact(); f != nil {
		mode = f.Arg
	}
	if writesOperands {
		mode = "all"
	}
	switch mode {
	case "all":
		paths = append(paths, operands...)
	case "last":
		if len(operands) > 0 && !wroteByOption {
			paths = append(paths, operands[len(operands)-1])
		}
	case "first":
		if len(operands) > 0 {
			paths = append(paths, operands[0])
		}
	case "after-first":
		if len(operands) > 1 {
			paths = append(paths, operands[1:]...)
		}
	}
	if writesOperands && len(operands) == 0 {
		unknown = true
	}
	return paths, unknown
}

// scriptOption reports whether an option gives a LANG program its script
// (so that the first operand is not one): sed -e/-f, awk -f/-e.
func scriptOption(lang, name string) bool {
	switch lang {
	case "sed":
		return name == "e" || name == "f" || name == "expression" || name == "file"
	case "awk":
		return name == "f" || name == "e" || name == "file" || name == "source" || name == "exec"
	}
	return false
}
