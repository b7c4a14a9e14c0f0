package decisionlog

import (
	"regexp"
	"strings"
	"sync"
)

// mask replaces a secret in the log: a plain word, so that a masked
// command still parses as it did (replay decides it again).
const mask = "REDACTED"

// redact masks the secrets in a command line or tool key, keeping the rest:
//
//   - the value of an environment assignment (`NAME=value`, also after
//     export, env or declare) or of a long option (`--name=value`,
//     `--name value`) whose name looks like a secret: it holds TOKEN,
//     SECRET, PASSWORD, PASSWD, PASS, KEY, CREDENTIAL, COOKIE or SESSION,
//     or starts with AUTH;
//   - the value of an Authorization-like header (`Authorization: Bearer x`,
//     `Proxy-Authorization:`, `Cookie:`, `X-Api-Key:`, `Private-Token:`, …);
//   - the password of a URL with user:pass@ (and a user part alone when it
//     is long enough to be a token), and of curl's `-u user:pass`.
//
// It errs on the side of masking: a variable named MONKEY loses its value.
func redact(s string) string {
	if s == "" || !mayHoldSecret(s) {
		return s
	}
	r := redactors()
	s = r.header.ReplaceAllString(s, "${1}"+mask)
	s = r.url.ReplaceAllStringFunc(s, redactURL)
	s = r.userOpt.ReplaceAllString(s, "${1}${2}:"+mask)
	for _, re := range []*regexp.Regexp{r.option, r.assign, r.quoted} {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatch(m)
			if !secretName(sub[2]) {
				return m
			}
			return sub[1] + sub[2] + sub[3] + mask
		})
	}
	return s
}

// redactArgv masks secrets in an argv: each word as redact does, and the
// word after a secret-named option given apart (`--token x`).
func redactArgv(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = redact(a)
		if i > 0 && secretOption(argv[i-1]) {
			out[i] = mask
		}
		if i > 0 && (argv[i-1] == "-u" || argv[i-1] == "--user") {
			if u, _, ok := strings.Cut(a, ":"); ok {
				out[i] = u + ":" + mask
			}
		}
	}
	return out
}

// mayHoldSecret is a cheap test that skips the expressions (and their
// compilation) for the common line without any sign of a secret: every
// pattern redact masks has one of these words in it, or a URL's @, or
// curl's -u.
func mayHoldSecret(s string) bool {
	if !strings.ContainsAny(s, "=:@-") {
		return false
	}
	u := strings.ToUpper(s)
	for _, w := range secretWords {
		if strings.Contains(u, w) {
			return true
		}
	}
	return strings.Contains(u, "://") && strings.Contains(u, "@") || strings.Contains(u, "-U") || strings.Contains(u, "--USER")
}

// secretWords are the words a secret's name holds (see secretName), and
// those of the headers redact masks.
var secretWords = []string{"TOKEN", "SECRET", "PASS", "KEY", "CREDENTIAL", "COOKIE", "SESSION", "PRIVATE", "AUTH"}

type redactorSet struct {
	assign, option, quoted, header, url, userOpt *regexp.Regexp
}

// A value: one shell word of single-quoted, double-quoted (with escapes)
// and bare parts, up to a blank or a shell operator; masked whole.
const value = `(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s;&|()<>'"])+`

var redactors = sync.OnceValue(func() *redactorSet {
	return &redactorSet{
		// NAME=value at a word start.
		assign: regexp.MustCompile(`(^|[\s;&|(` + "`" + `]|\$\()([A-Za-z_][A-Za-z0-9_]*)(=)` + value),
		// 'NAME=value' and "--name=value": a word quoted whole, as
		// argv quoted back into a line has it; masked up to the quote.
		quoted: regexp.MustCompile(`((?:^|[\s;&|(` + "`" + `]|\$\()['"])(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)(=)[^'"]*`),
		// --name=value or --name value.
		option: regexp.MustCompile(`(^|\s)(--[A-Za-z][A-Za-z0-9_.-]*)(=|\s+)` + value),
		header: regexp.MustCompile(`(?i)(\b(?:proxy-)?authorization\s*:\s*|\bcookie\s*:\s*|\bx-[a-z-]*(?:token|key|secret|auth)[a-z-]*\s*:\s*|\bprivate-token\s*:\s*|\bapi-key\s*:\s*)[^'"\n]*`),
		url:    regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.-]*://)([^/\s@'"]+)@`),
		// curl/wget style: -u user:pass, --user=user:pass
		userOpt: regexp.MustCompile(`((?:^|\s)(?:-u|--user|--proxy-user)(?:\s+|=))([^\s:'"]+):` + value),
	}
})

// secretName reports whether an assignment's or option's name looks like
// it holds a secret.
func secretName(name string) bool {
	n := strings.ToUpper(strings.TrimLeft(name, "-"))
	n = strings.ReplaceAll(n, "-", "_")
	if n == "" {
		return false
	}
	for _, w := range secretWords[:len(secretWords)-1] {
		if strings.Contains(n, w) {
			return !strings.HasSuffix(n, "_FILE") && !strings.HasSuffix(n, "_PATH") && !passNotSecret(n)
		}
	}
	return strings.HasPrefix(n, "AUTH")
}

// passNotSecret: words that contain PASS but say nothing secret.
func passNotSecret(n string) bool {
	switch n {
	case "PASSTHROUGH", "PASS_THROUGH", "BYPASS", "COMPASS":
		return true
	}
	return false
}

// secretOption reports whether an argv word is a long option naming a
// secret whose value is the next word.
func secretOption(w string) bool {
	return strings.HasPrefix(w, "--") && !strings.Contains(w, "=") && secretName(w)
}

// redactURL masks the user info of scheme://user:pass@ (the password) or
// scheme://token@ (a user part of 16 bytes or more: a token).
func redactURL(m string) string {
	sub := redactors().url.FindStringSubmatch(m)
	scheme, info := sub[1], sub[2]
	if user, _, ok := strings.Cut(info, ":"); ok {
		return scheme + user + ":" + mask + "@"
	}
	if len(info) >= 16 {
		return scheme + mask + "@"
	}
	return m
}
