// Package otelcol tests agent-shim's decision export against a real
// OpenTelemetry Collector, built from the collector's own Go modules in
// the module under collector/ (the OTLP receiver and contrib's file
// exporter), so that agent-shim's module stays small.
//
// The test is behind the otel build tag (it builds the collector, a few
// minutes the first time):
//
//	go test -tags otel -run TestCollector ./e2e/otelcol
package otelcol
