// Command agent-shim-verify is `agent-shim verify`: it proves, for the
// release of an agent the person has, what the project's end-to-end suite
// proves for the releases it pins (package verify). agent-shim runs it
// from beside itself, so that the hook's binary links no network code.
//
// # Usage
//
//	agent-shim verify [--json] [-v] [--timeout D] [--parallel N] claude-code|codex|gemini-cli
//
// It runs the agent found on PATH headless, in its most permissive mode,
// against a scripted model API on 127.0.0.1 (no model, no network), in a
// temporary home holding a copy of the person's installed hook settings
// (Codex's trust of the hook carried over, the second line beside it), and
// reports each check: allowed (a harmless command runs: the control),
// denied (a forced push to a local bare repository does not run, and the
// hook's reason reaches the model), asked (a push the checks' policy asks
// about does not run with nobody to ask, and the model is told why),
// hook-missing and hook-crash (a failing hook blocks the call),
// second-line (with hooks turned off by the agent's own switch, its own
// rules refuse the forced push). Nothing of the person's is changed.
// -v prints each run's output of the agent; --json the report.
//
// # Exit codes
//
//	0  green: every check passed
//	1  red: a check failed (named on stderr), or the checks could not be
//	   run (the agent not on PATH, no hook installed, no git)
//	2  bad command line
//
// # Files
//
// None of the person's: each check's home, project and bare repository
// are in a temporary directory, removed at the end.
package main
