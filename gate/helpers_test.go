package gate

import "context"

// The per-kind forms of Check and Decide, for the tests.

// checkBash decides a shell command line, asking a person when needed.
func (g *Gate) checkBash(ctx context.Context, command string) error {
	return g.check(ctx, "Bash", command, g.DecideBash(command))
}

// checkFileRead decides a file tool reading path.
func (g *Gate) checkFileRead(ctx context.Context, tool, path string) error {
	return g.check(ctx, tool, path, g.decideFileRead(tool, path))
}

// checkFileWrite decides a file tool writing path.
func (g *Gate) checkFileWrite(ctx context.Context, tool, path string) error {
	return g.check(ctx, tool, path, g.decideFileWrite(tool, path))
}

// decideFileRead decides a file tool reading path without prompting.
func (g *Gate) decideFileRead(tool, path string) Decision {
	return g.decideFile(identify(tool), path, false)
}

// decideFileWrite decides a file tool writing path without prompting.
func (g *Gate) decideFileWrite(tool, path string) Decision {
	return g.decideFile(identify(tool), path, true)
}
