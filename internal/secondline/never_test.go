package secondline_test

import (
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/secondline"
)

func init() { secondline.SetNeverAllow(gate.NeverAllow()) }
