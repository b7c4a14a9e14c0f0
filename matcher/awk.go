package matcher

import "strings"

// awkFloors blocks an awk program that can run a command or write a file
// (system(), a pipe to or from a command, print > file, gawk's @load and
// indirect calls), or that cannot be read. A program that provably does
// neither is as harmless as cat. Options that load programs from files
// (-f) are the table's concern.
func (c *call) awkFloors() {
	args := c.rest
	var progs []string
	given := false // -f/-e/--source gave the program
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			if !given || canBeFlag(a) {
				c.blockRuns("awk program is not known statically: %s", a.Text)
				return
			}
			continue
		}
		t := a.Text
		next := func() (string, bool) {
			if i+1 >= len(args) || !args[i+1].Static {
				return "", false
			}
			i++
			return args[i].Text, true
		}
		switch {
		case t == "--":
			if !given && i+1 < len(args) {
				if !args[i+1].Static {
					c.blockRuns("awk program is not known statically: %s", args[i+1].Text)
					return
				}
				progs = append(progs, args[i+1].Text)
			}
			i = len(args)
		case t == "-e" || t == "--source":
			s, ok := next()
			if !ok {
				c.blockRuns("awk program is not known statically")
				return
			}
			progs, given = append(progs, s), true
		case strings.HasPrefix(t, "--source="):
			progs, given = append(progs, strings.TrimPrefix(t, "--source=")), true
		case t == "-f" || t == "--file" || strings.HasPrefix(t, "--file=") || strings.HasPrefix(t, "-f") && len(t) > 2:
			given = true // runs a program from a file: the table floors it
			if t == "-f" || t == "--file" {
				i++
			}
		case t == "-v" || t == "-F" || t == "-W" || t == "--assign" || t == "--field-separator":
			i++ // the option's value
		case strings.HasPrefix(t, "-") && len(t) > 1:
		default:
			if !given {
				progs = append(progs, t)
				given = true
			}
		}
	}
	if !given {
		c.blockRuns("awk program is not given")
		return
	}
	for _, p := range progs {
		if awkRuns(p) {
			c.blockRuns("awk program runs commands or writes files: %s", p)
			// The command lines it spells out are decided too: a
			// deny inside is a deny.
			for _, cmd := range awkCommands(p) {
				c.nested = append(c.nested, nested{script: cmd, via: "awk"})
			}
			return
		}
	}
}

// awkCommands returns the string literals an awk program runs as command
// lines: system("…"), "…" | getline, print | "…" and |& "…".
func awkCommands(p string) []string {
	var out []string
	// str reads a string literal starting at p[i] == '"'.
	str := func(i int) (string, int, bool) {
		var sb strings.Builder
		for j := i + 1; j < len(p); j++ {
			switch p[j] {
			case '\\':
				if j+1 < len(p) {
					j++
					switch p[j] {
					case 'n':
						sb.WriteByte('\n')
					case 't':
						sb.WriteByte('\t')
					default:
						sb.WriteByte(p[j])
					}
				}
			case '"':
				return sb.String(), j + 1, true
			default:
				sb.WriteByte(p[j])
			}
		}
		return "", len(p), false
	}
	skip := func(i int) int {
		for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
			i++
		}
		return i
	}
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '"':
			lit, end, ok := str(i)
			if !ok {
				return out
			}
			if j := skip(end); j < len(p) && p[j] == '|' && (j+1 >= len(p) || p[j+1] != '|') {
				out = append(out, lit) // "cmd" | getline
			}
			i = end - 1
		case p[i] == '|' && (i+1 >= len(p) || p[i+1] != '|') && (i == 0 || p[i-1] != '|'):
			j := i + 1
			if j < len(p) && p[j] == '&' {
				j++
			}
			if j = skip(j); j < len(p) && p[j] == '"' {
				if lit, _, ok := str(j); ok {
					out = append(out, lit) // print | "cmd"
				}
			}
		case strings.HasPrefix(p[i:], "system") && wordAt(p, i, 6):
			j := skip(i + 6)
			if j < len(p) && p[j] == '(' {
				if j = skip(j + 1); j < len(p) && p[j] == '"' {
					if lit, _, ok := str(j); ok {
						out = append(out, lit)
					}
				}
			}
		}
	}
	return out
}

// awkRuns reports whether an awk program may run a command or write a
// file. It reads the text without parsing it, so it errs on the side of
// yes: any "system" word, any single | (pipes, |&), any @ (gawk's @load,
// @include and indirect calls), and a > inside a print or printf
// statement.
func awkRuns(p string) bool {
	if strings.Contains(p, "@") {
		return true
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '|' {
			continue
		}
		if i+1 < len(p) && p[i+1] == '|' {
			i++ // ||: logical or
			continue
		}
		return true
	}
	for i := 0; i+6 <= len(p); i++ {
		if p[i:i+6] == "system" && wordAt(p, i, 6) {
			return true
		}
	}
	// print and printf statements: up to ; } newline, a > redirects.
	for i := 0; i < len(p); i++ {
		if !strings.HasPrefix(p[i:], "print") || !wordAt(p, i, 5) && !wordAt(p, i, 6) {
			continue
		}
		end := strings.IndexAny(p[i:], ";}\n")
		stmt := p[i:]
		if end >= 0 {
			stmt = p[i : i+end]
		}
		if strings.Contains(stmt, ">") {
			return true
		}
	}
	return false
}

// wordAt reports whether p[i:i+n] is a whole word.
func wordAt(p string, i, n int) bool {
	ident := func(b byte) bool {
		return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
	}
	if i > 0 && ident(p[i-1]) {
		return false
	}
	return i+n >= len(p) || !ident(p[i+n])
}
