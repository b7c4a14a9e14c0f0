package supervisor

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/agent-shim/agent-shim/internal/supervisor/inherited"
)

// helpers are the test binary's other modes: programs the tests run under
// the supervisor, each one system call whose result it prints.
var helpers = map[string]func(args []string) int{}

func TestMain(m *testing.M) {
	// As agent-shim does in a process that may run the layer: the
	// descriptors inherited are listed before any is opened.
	inherited.Scan()
	// "nested-run" is a supervised program that tries to start a
	// supervisor of its own.
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "nested-run":
			_, err := Run(context.Background(), Config{
				Path: "/bin/true", Argv: []string{"true"}, Env: os.Environ(),
				Decide: func(Exec) Verdict { return Verdict{Allow: true} },
			})
			fmt.Println(err)
			os.Exit(3)
		}
		if h, ok := helpers[os.Args[1]]; ok {
			os.Exit(h(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}
