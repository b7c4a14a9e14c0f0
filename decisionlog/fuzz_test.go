package decisionlog

import (
	"strings"
	"testing"
)

// FuzzRedact: redact never panics, is idempotent, and masks the value of
// every NAME=value assignment with a secret name that it is given at the
// start of a line.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"GITHUB_TOKEN=ghp_abc123 gh pr list", "curl -H 'Authorization: Bearer x' https://a:b@h/p",
		"mysql --password=hunter2 db", "curl -u alice:pw https://x", "git status && fx build", "",
		`DB_PASSWD="x\"y" run`, "x=$(TOKEN=t cmd)",
	} {
		f.Add(s, "s3cr3tvalue")
	}
	f.Fuzz(func(t *testing.T, s, secret string) {
		once := redact(s)
		if twice := redact(once); twice != once {
			t.Errorf("not idempotent:\n%q\n%q\n%q", s, once, twice)
		}
		if secret == "" || strings.ContainsAny(secret, " \t\n\r\v\f;&|()<>'\"`$\\=") || strings.Contains(secret, "REDACTED") {
			return
		}
		line := "API_TOKEN=" + secret + " " + s
		if got := redact(line); !strings.HasPrefix(got, "API_TOKEN="+mask+" ") {
			t.Errorf("redact(%q) = %q keeps the token", line, got)
		}
	})
}
