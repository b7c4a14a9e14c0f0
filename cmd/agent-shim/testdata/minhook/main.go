// Command minhook is the floor a Go hook cannot go under: it decodes the
// hook input, parses the command with mvdan.cc/sh, walks it, and prints
// an answer, deciding nothing. TestHookCost (measure tag) pairs
// agent-shim's hook with it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

func main() {
	var in struct {
		ToolInput struct {
			Command string `json:"command"`
		} `json:"tool_input"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(in.ToolInput.Command), "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	calls := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.CallExpr); ok {
			calls++
		}
		return true
	})
	decision := "allow"
	if calls == 0 {
		decision = "ask"
	}
	fmt.Printf(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":%q}}`+"\n", decision)
}
