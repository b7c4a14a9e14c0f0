// A separate module, so that the project itself does not depend on
// go-json-experiment: it measures the hand-written decoder of package config
// against github.com/go-json-experiment/json (what becomes encoding/json/v2)
// on a config.json of Fuchsia's size, and the hook's policy load with the
// compact copy warm and cold. Run: go test -bench . -benchmem
module jsonv2bench

go 1.26.8

require github.com/agent-shim/agent-shim v0.0.0

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/gofrs/flock v0.13.2 // indirect
	golang.org/x/sys v0.49.0 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
)

replace github.com/agent-shim/agent-shim => ../../../..
