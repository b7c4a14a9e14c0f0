// Package otlp sends agent-shim's decision log to an OpenTelemetry
// collector as OTLP log records, one per decision, through the
// OpenTelemetry Go SDK's OTLP log exporter (HTTP or gRPC): from the
// position saved beside the log, saving the new position only after the
// collector acknowledged the records (package telemetry keeps the
// position, the lock and the schedule). It links the SDK, gRPC and the
// network stack, so only agent-shim-export imports it, never the hook.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/agent-shim/agent-shim/internal/telemetry"
)

// maxFailing is how long an exporter stays trying a collector that is
// down or refuses; then it leaves, and the next hook call past the
// interval starts another.
const maxFailing = 5 * time.Minute

// batchSize is how many records one request carries at most: at the
// log's bounds on a line (8 KiB of command, as much of argv, 1 KiB of
// reason) about 2.5 MB, under the request limits of collectors and
// vendors' endpoints (the collector's own is 20 MiB). A request refused
// for good would stop the export there: the records stay in the log.
const batchSize = 128

// Job is one run of the export.
type Job struct {
	// Log is the decision log.
	Log string
	// Once: send what the log holds, then leave. Otherwise stay until
	// no new record came for Idle.
	Once bool
	Idle time.Duration
	// Settings are the collector's, as telemetry.Resolve reads them.
	Settings telemetry.Settings
	// Retry is how a request refused or failed is retried; past it the
	// run leaves and the next one retries (DefaultRetry; the zero value
	// retries nothing).
	Retry otlploghttp.RetryConfig
}

// Export sends the log's records until it is caught up (Once) or has
// been idle for Idle, checking for new records every interval.
func Export(ctx context.Context, j Job) error {
	logPath, once, idle, s := j.Log, j.Once, j.Idle, j.Settings
	interval := s.Interval
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	lease, err := telemetry.Acquire(logPath)
	if err != nil {
		return err
	}
	if lease == nil {
		return nil // another exporter is at work
	}
	defer lease.Release()

	exp, err := NewExporter(ctx, s, j.Retry)
	if err != nil {
		return err
	}
	shutdown := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		exp.Shutdown(sctx)
	}
	defer func() { shutdown() }()
	enc, err := newEncoder(ctx)
	if err != nil {
		return err
	}
	q := telemetry.NewQueue(logPath)
	last := time.Now()
	var failing time.Time // when the present run of failures began
	for {
		n, err := sendBatch(ctx, q, exp, enc)
		if n > 0 {
			last, failing = time.Now(), time.Time{}
			continue
		}
		wait := interval
		if err != nil {
			// The collector is down or refused: stay and try again each
			// interval (the hooks that start an exporter meanwhile find
			// this one), with a fresh connection, for up to maxFailing.
			if failing.IsZero() {
				failing = time.Now()
			}
			if once || time.Since(failing) >= maxFailing {
				return err
			}
			shutdown()
			if exp, err = NewExporter(ctx, s, j.Retry); err != nil {
				return err
			}
		} else {
			left := idle - time.Since(last)
			if once || left <= 0 {
				return nil
			}
			wait = min(interval, left)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// sendBatch sends the next batch and saves the position past it once the
// collector acknowledged it; it returns how many lines it passed.
func sendBatch(ctx context.Context, q *telemetry.Queue, exp sdklog.Exporter, enc *encoder) (int, error) {
	b, err := q.Next(batchSize)
	if err != nil {
		return 0, err
	}
	if len(b.Records) == 0 && b.Skipped == 0 {
		return 0, nil
	}
	if len(b.Records) > 0 {
		recs := enc.records(ctx, b.Records)
		if err := exp.Export(ctx, recs); err != nil {
			return 0, fmt.Errorf("sending %d decisions: %w", len(recs), err)
		}
	}
	if err := q.Commit(b); err != nil {
		return 0, err
	}
	return len(b.Records) + b.Skipped, nil
}

// DefaultRetry is how a run retries a refused or failed request; past it
// the run leaves and the next one retries.
var DefaultRetry = otlploghttp.RetryConfig{
	Enabled:         true,
	InitialInterval: 500 * time.Millisecond,
	MaxInterval:     5 * time.Second,
	MaxElapsedTime:  20 * time.Second,
}

// NewExporter is the SDK's OTLP log exporter for s's protocol
// (http/protobuf or grpc), sending to s's endpoint with s's headers when
// they are the config section's, else as the standard OTEL_EXPORTER_OTLP_*
// variables say (the SDK reads them; an option given here would win over
// them), retrying for a bounded time (the next run retries again).
func NewExporter(ctx context.Context, s telemetry.Settings, retry otlploghttp.RetryConfig) (sdklog.Exporter, error) {
	var exp sdklog.Exporter
	var err error
	switch s.Protocol {
	case "", "http/protobuf":
		opts := []otlploghttp.Option{otlploghttp.WithRetry(retry)}
		if s.Endpoint != "" {
			opts = append(opts, otlploghttp.WithEndpointURL(strings.TrimSuffix(s.Endpoint, "/")+"/v1/logs"))
		}
		if s.Headers != nil {
			opts = append(opts, otlploghttp.WithHeaders(s.Headers))
		}
		exp, err = otlploghttp.New(ctx, opts...)
	case "grpc":
		// gRPC's own reconnection backoff grows to two minutes while
		// the collector is down; bounded here, so that a collector
		// that is back is reached within the retries.
		opts := []otlploggrpc.Option{otlploggrpc.WithRetry(otlploggrpc.RetryConfig(retry)),
			otlploggrpc.WithDialOption(grpc.WithConnectParams(grpc.ConnectParams{
				Backoff:           backoff.Config{BaseDelay: 500 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 3 * time.Second},
				MinConnectTimeout: 5 * time.Second,
			}))}
		if s.Endpoint != "" {
			opts = append(opts, otlploggrpc.WithEndpointURL(s.Endpoint))
		}
		if s.Headers != nil {
			opts = append(opts, otlploggrpc.WithHeaders(s.Headers))
		}
		exp, err = otlploggrpc.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("configuring the OTLP exporter: protocol %q is not supported (http/protobuf or grpc)", s.Protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("configuring the OTLP exporter: %w", err)
	}
	return exp, nil
}

// encoder turns records of the log into the SDK's log records, with the
// resource and instrumentation scope the SDK sets: a logger provider
// whose one processor keeps what is emitted.
type encoder struct {
	logger log.Logger
	kept   *keeper
}

func newEncoder(ctx context.Context) (*encoder, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "agent-shim")),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("reading the OpenTelemetry resource: %w", err)
	}
	k := &keeper{}
	p := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(k))
	return &encoder{logger: p.Logger("github.com/agent-shim/agent-shim"), kept: k}, nil
}

func (e *encoder) records(ctx context.Context, rs []telemetry.Record) []sdklog.Record {
	e.kept.recs = e.kept.recs[:0]
	for _, r := range rs {
		e.logger.Emit(ctx, logRecord(r))
	}
	return e.kept.recs
}

// keeper is a processor that keeps what is emitted.
type keeper struct{ recs []sdklog.Record }

func (k *keeper) OnEmit(_ context.Context, r *sdklog.Record) error {
	k.recs = append(k.recs, r.Clone())
	return nil
}
func (k *keeper) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (k *keeper) Shutdown(context.Context) error                         { return nil }
func (k *keeper) ForceFlush(context.Context) error                       { return nil }
