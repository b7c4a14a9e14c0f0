package programs

import "strings"

// Which machine a word names, for the hosts facts (see the package
// documentation) and the URLs interpreter code names.

// OperandHost returns the machine an operand names: the host of a URL
// (scheme://[user@]host[:port]/…), of [user@]host:path, or with url the
// operand itself (host, host:port, host/path). names is false for an
// operand that names no machine (a local path, a port number). A host
// that cannot be read is returned "" with names set: not this machine.
func OperandHost(op string, url bool) (host string, names bool) {
	if op == "" || strings.ContainsAny(op, "{}\\ \t\n") || strings.ContainsAny(strings.Replace(op, "[::1]", "", 1), "[]") {
		// curl expands {a,b} and [1-9]; a blank or a backslash is no
		// host we read. Only [::1] is read inside brackets.
		return "", op != "" && url
	}
	if scheme, rest, ok := strings.Cut(op, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, "/:@") {
		if strings.EqualFold(scheme, "file") {
			return "", false
		}
		return authorityHost(rest), true
	}
	if strings.HasPrefix(op, "/") || strings.HasPrefix(op, "./") || strings.HasPrefix(op, "../") || strings.HasPrefix(op, "~") {
		return "", false
	}
	if isDigits(op) {
		return "", false // a port (nc localhost 8080)
	}
	if !url {
		// [user@]host:path, as scp, rsync and git read it; a path with
		// a slash before the colon is a local path.
		i := strings.IndexByte(op, ':')
		if i <= 0 || strings.Contains(op[:i], "/") {
			return "", false
		}
		h := op[:i]
		if at := strings.LastIndexByte(h, '@'); at >= 0 {
			h = h[at+1:]
		}
		return h, true
	}
	return authorityHost(op), true
}

// authorityHost returns the host of a URL's rest after the scheme:
// [user[:pass]@]host[:port][/…]; "" when it cannot be read.
func authorityHost(rest string) string {
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return ""
		}
		return rest[1:end]
	}
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		if !isDigits(rest[i+1:]) {
			return ""
		}
		rest = rest[:i]
	}
	return rest
}

// Loopback reports whether a host is this machine: localhost, an address
// of 127.0.0.0/8 in dotted decimal, ::1, or 0.0.0.0 and :: (which connect
// to this machine). Other spellings of them (0x7f.1, 127.1, 0:0::1,
// localhost.) are not read as this machine.
func Loopback(host string) bool {
	switch strings.ToLower(host) {
	case "localhost", "::1", "::", "0.0.0.0":
		return true
	}
	parts := strings.Split(host, ".")
	if len(parts) != 4 || parts[0] != "127" {
		return false
	}
	for _, p := range parts[1:] {
		if !isDigits(p) || len(p) > 3 || len(p) > 1 && p[0] == '0' || len(p) == 3 && p > "255" {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
