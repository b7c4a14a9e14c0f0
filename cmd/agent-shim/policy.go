package main

import "github.com/agent-shim/agent-shim/internal/config"

// configPath returns --config, else the agent's default config.json.
func (e *env) configPath(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return config.DefaultPath(e.getenv)
}
