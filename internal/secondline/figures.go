package secondline

// Figure is one agent's second line, compiled from the adversarial-2
// policy, measured on the project's corpora (matcher/testdata/adversarial,
// -2, -3 and -5): of the plain DENY rows (one command, no shell syntax),
// how many the agent's engine refuses with these rules alone; and how many rows expected ALLOW or DEFAULT it
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
	{Agent: "claude-code", PlainDeny: 61, PlainDenied: 37, Refused: 0,
		How: "Claude Code 2.1.332 itself on every plain row (e2e TestSecondLineAgents; rm -rfv / is refused by its own check before the rules), which agrees with secondline's re-implementation on the other 117"},
	{Agent: "codex", PlainDeny: 61, PlainDenied: 36, Refused: 0,
		How: "codex execpolicy check of Codex 0.169.0 on every plain row (e2e), which agrees with the re-implementation"},
	{Agent: "gemini-cli", PlainDeny: 61, PlainDenied: 43, Refused: 0,
		How: "Gemini CLI 0.61.0 itself on every plain row (e2e TestSecondLineAgents), which agrees with secondline's re-implementation on all 118"},
}
