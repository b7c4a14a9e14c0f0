//go:build !unix

package telemetry

// noWait: no flags to add here.
const noWait = 0
