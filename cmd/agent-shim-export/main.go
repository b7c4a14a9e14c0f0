package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/telemetry"
)

const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
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

func main() { os.Exit(run(context.Background(), os.Args, os.Stderr)) }

// run is main without the process: tests call it directly.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("agent-shim-export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logPath := fs.String("log", "", "the decision log (default: $XDG_STATE_HOME/agent-shim/decisions.jsonl)")
	configPath := fs.String("config", "", "the config.json whose agentShim.telemetry configures the export (default: the agent's)")
	once := fs.Bool("once", false, "send what the log holds, then leave")
	idle := fs.Duration("idle", 0, "leave after this long with no new record (default: three intervals, at most a minute)")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agent-shim-export: error: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *logPath == "" {
		p, err := decisionlog.Path(os.Getenv)
		if err != nil {
			fmt.Fprintf(stderr, "agent-shim-export: error: %v\n", err)
			return exitError
		}
		*logPath = p
	}
	if *configPath == "" {
		p, err := config.DefaultPath(os.Getenv)
		if err != nil {
			fmt.Fprintf(stderr, "agent-shim-export: error: %v\n", err)
			return exitError
		}
		*configPath = p
	}
	section, err := config.ReadTelemetry(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "agent-shim-export: error: %v\n", err)
		return exitError
	}
	settings := telemetry.Resolve(os.Getenv, section)
	if *idle <= 0 {
		*idle = min(3*settings.Interval, time.Minute)
	}
	if err := export(ctx, *logPath, *once, *idle, settings); err != nil {
		fmt.Fprintf(stderr, "agent-shim-export: error: %v\n", err)
		return exitError
	}
	return exitOK
}

// export sends the log's records until it is caught up (once) or has been
// idle for idle, checking for new records every interval.
func export(ctx context.Context, logPath string, once bool, idle time.Duration, s telemetry.Settings) error {
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

	exp, err := newExporter(ctx, s)
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
			if exp, err = newExporter(ctx, s); err != nil {
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

// retry is how a run retries a refused or failed request; past it the
// run leaves and the next one retries. (A variable for the tests.)
var retry = otlploghttp.RetryConfig{
	Enabled:         true,
	InitialInterval: 500 * time.Millisecond,
	MaxInterval:     5 * time.Second,
	MaxElapsedTime:  20 * time.Second,
}

// newExporter is the SDK's OTLP log exporter for s's protocol
// (http/protobuf or grpc), sending to s's endpoint with s's headers when
// they are the config section's, else as the standard OTEL_EXPORTER_OTLP_*
// variables say (the SDK reads them; an option given here would win over
// them), retrying for a bounded time (the next run retries again).
func newExporter(ctx context.Context, s telemetry.Settings) (sdklog.Exporter, error) {
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
