//go:build zsh

package agents

import "testing"

// The wrapper texts of the tests are what zsh reads: checked with zsh -n
// (syntax only); nothing runs.
func TestUnwrapRealZsh(t *testing.T) {
	syntaxCheck(t, "zsh", []string{claudeZsh, codexHead + claudeQuote("echo 'hi'")})
}
