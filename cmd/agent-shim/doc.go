// Command agent-shim decides what an AI coding agent's tool calls may do,
// by the policy agents-setup writes into the agent's config.json, through
// package gate: as the agent's hook (agent-shim hook <agent>), as its
// shell (agent-shim -c), around a whole program under the run-time layer
// (agent-shim run), and for people (explain, log, replay, approve, doctor,
// rules, verify). `agent-shim --help` lists the commands; docs/cli.md is
// the reference: every command, the hook protocols, the exit codes and
// the files it reads and writes.
package main
