package decisionlog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		// Environment assignments with secret-looking names.
		{"GITHUB_TOKEN=ghp_abc123 gh pr list", "GITHUB_TOKEN=REDACTED gh pr list"},
		{"env AWS_SECRET_ACCESS_KEY=wJalr aws s3 ls", "env AWS_SECRET_ACCESS_KEY=REDACTED aws s3 ls"},
		{"export PGPASSWORD='p a s s'; psql", "export PGPASSWORD=REDACTED; psql"},
		{`DB_PASSWD="x\"y" run`, "DB_PASSWD=REDACTED run"},
		{"API_KEY=k1 OTHER=keep cmd", "API_KEY=REDACTED OTHER=keep cmd"},
		{"AUTH_HEADER=abc curl x", "AUTH_HEADER=REDACTED curl x"},
		{"MY_CREDENTIALS=c do", "MY_CREDENTIALS=REDACTED do"},
		{"a; SESSION_SECRET=s b", "a; SESSION_SECRET=REDACTED b"},
		{"x=$(TOKEN=t cmd)", "x=$(TOKEN=REDACTED cmd)"},
		{"FOO=1 rm -rf /", "FOO=1 rm -rf /"},
		{"PATH=/bin:/usr/bin ls", "PATH=/bin:/usr/bin ls"},
		{"TOKEN_FILE=/run/tok cmd", "TOKEN_FILE=/run/tok cmd"},
		{"echo TOKEN value", "echo TOKEN value"},
		{"echo x TOKEN=y", "echo x TOKEN=REDACTED"},
		// Words quoted whole.
		{"env 'API_TOKEN=s3cret' make", "env 'API_TOKEN=REDACTED' make"},
		{`echo "TOKEN=a b" c`, `echo "TOKEN=REDACTED" c`},
		{`curl "--password=x y" u`, `curl "--password=REDACTED" u`},
		{"env 'LANG=C' make", "env 'LANG=C' make"},
		// Options.
		{"mysql --password=hunter2 db", "mysql --password=REDACTED db"},
		{"tool --api-key k123 --verbose", "tool --api-key REDACTED --verbose"},
		{"tool --foo TOKEN=x", "tool --foo TOKEN=REDACTED"},
		{"git log --format=%H", "git log --format=%H"},
		// Headers.
		{`curl -H 'Authorization: Bearer eyJhbGci.x.y' https://api`, `curl -H 'Authorization: REDACTED' https://api`},
		{`curl -H "authorization:Basic dXNlcjpwYXNz" u`, `curl -H "authorization:REDACTED" u`},
		{`curl -H 'X-Api-Key: abc' -H 'Accept: json' u`, `curl -H 'X-Api-Key: REDACTED' -H 'Accept: json' u`},
		{`curl -H 'Cookie: sid=1' u`, `curl -H 'Cookie: REDACTED' u`},
		{`curl -H 'PRIVATE-TOKEN: glpat-x' u`, `curl -H 'PRIVATE-TOKEN: REDACTED' u`},
		// URLs.
		{"git clone https://user:s3cret@example.com/r.git", "git clone https://user:REDACTED@example.com/r.git"},
		{"git push https://ghp_0123456789abcdefghij@github.com/o/r", "git push https://REDACTED@github.com/o/r"},
		{"git clone https://git@example.com/r.git", "git clone https://git@example.com/r.git"},
		{"ssh git@github.com", "ssh git@github.com"},
		{"curl -u alice:pw https://x", "curl -u alice:REDACTED https://x"},
		{"curl --user=alice:'p w' https://x", "curl --user=alice:REDACTED https://x"},
		// Nothing to mask.
		{"git status && fx build", "git status && fx build"},
		{"", ""},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		t.Logf("input: %q", tc.in)
		if got := redact(tc.in); got != tc.want {
			t.Errorf("redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactArgv(t *testing.T) {
	in := []string{"curl", "--token", "abc", "-u", "bob:pw", "-H", "Authorization: Bearer x", "https://a:b@h/p", "plain"}
	want := []string{"curl", "--token", "REDACTED", "-u", "bob:REDACTED", "-H", "Authorization: REDACTED", "https://a:REDACTED@h/p", "plain"}
	if got := redactArgv(in); !slices.Equal(got, want) {
		t.Errorf("redactArgv:\n got %q\nwant %q", got, want)
	}
}

// Secrets are masked in every text field of a logged line.
func TestMarshalRedacts(t *testing.T) {
	line, err := Marshal(Entry{Layer: LayerShell, Verdict: "ask",
		Command: "GH_TOKEN=t1 git push https://u:p@h/r",
		Reason:  "GH_TOKEN=t1 git push: matches an ask rule",
		Argv:    []string{"git", "push", "https://u:p@h/r"}})
	if err != nil {
		t.Fatal(err)
	}
	var e Entry
	json.Unmarshal(line, &e)
	for _, s := range append([]string{e.Command, e.Reason}, e.Argv...) {
		for _, secret := range []string{"t1", "u:p@"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q leaks %q", s, secret)
			}
		}
	}
}
