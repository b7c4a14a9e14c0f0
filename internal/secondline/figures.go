package secondline

// Figure is one agent's second line, compiled from the adversarial-2
// policy, measured on the project's corpora (matcher/testdata/adversarial,
// -2, -3 and -5): of the plain DENY rows (one command, no shell syntax), how many the agent's engine refuses with
// these rules alone; and how many rows expected ALLOW or DEFAULT it
// refuses that the policy does not. TestCoverage holds the figures to the
// measurement; doctor prints them.
type Figure struct {
	Agent                  string
	PlainDeny, PlainDenied int
	Refused                int
	// How says how the engine was run.
	How string
}

// Figures are the measured figures, by agent.
var Figures = []Figure{
	{Agent: "claude-code", PlainDeny: 61, PlainDenied: 20, Refused: 0,
		How: "secondline's re-implementation of Claude Code's Bash rule matching (its documentation and the wrapper expressions in 2.1.332); not yet held to the agent"},
	{Agent: "codex", PlainDeny: 61, PlainDenied: 36, Refused: 0,
		How: "codex execpolicy check of Codex 0.169.0 on every plain row (e2e), which agrees with the re-implementation"},
	{Agent: "gemini-cli", PlainDeny: 61, PlainDenied: 43, Refused: 0,
		How: "secondline's re-implementation of Gemini CLI 0.61.0's policy engine (buildArgsPatterns, ruleMatches, checkShellCommand); not yet held to the agent"},
}
