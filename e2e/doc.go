// Package e2e drives the real agents, installed from npm at pinned
// versions by install-agents.sh (Claude Code 2.1.332, Codex 0.169.0,
// Gemini CLI 0.61.0), headless against a scripted model server on
// 127.0.0.1 that makes one tool call (or a short sequence), with the hook
// installed by the agent-shim built from this tree, and judges what ran by
// the disk: a canary touched in the project, a forced push to a local bare
// repository, protected files compared byte for byte. Every test has its
// own HOME, XDG directories, CODEX_HOME, GEMINI_CLI_HOME and TMPDIR under
// t.TempDir(). The managed-tier tests (managed_test.go) run install and
// the agent in a private mount namespace (unshare(1): as root, or in a
// user namespace) whose /etc/claude-code, /etc/codex and /etc/gemini-cli
// are directories of the test: the real /etc is never written.
//
//	e2e/install-agents.sh
//	go test -tags e2e -count=1 -parallel 6 ./e2e/
//
// -bindir DIR uses prebuilt agent-shim and agents-setup instead of
// building them (for iterating while another package is half-edited).
//
// The tests are behind the build tag e2e: `go test ./...` builds this
// package (this file) and runs none of them.
package e2e
