package serve

import (
	"context"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/reinhq/rein"
)

// tracing sends OpenTelemetry traces of checks, votes and approvals to an
// OTLP/HTTP endpoint: --otlp-endpoint, or the standard
// OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT variables.
// Spans are written after the fact from what the pipeline recorded, so the
// decision path itself carries no tracing code and no extra latency.
type tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

func newTracing(ctx context.Context, endpoint string) (*tracing, error) {
	var opts []otlptracehttp.Option
	switch {
	case endpoint != "":
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(endpoint, "/")+"/v1/traces"))
	case os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "":
		return nil, nil // not configured
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	res := resource.NewSchemaless(attribute.String("service.name", "rein"), attribute.String("service.version", rein.Version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)), sdktrace.WithResource(res))
	return &tracing{provider: tp, tracer: tp.Tracer("github.com/reinhq/rein")}, nil
}

// check records one decided check as an "execute_tool" span (OpenTelemetry
// GenAI semantic conventions for tool execution) with rein's decision.
func (t *tracing) check(rec *rein.CheckRecord, took time.Duration) {
	end := time.Now()
	_, span := t.tracer.Start(context.Background(), "execute_tool "+rec.Check.Tool,
		trace.WithTimestamp(end.Add(-took)), trace.WithSpanKind(trace.SpanKindServer))
	span.SetAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", rec.Check.Tool),
		attribute.String("gen_ai.agent.name", rec.Check.Agent),
		attribute.String("gen_ai.conversation.id", rec.Check.Session),
		attribute.String("rein.check.id", rec.ID),
		attribute.String("rein.tenant", rec.Tenant),
		attribute.String("rein.decision", string(rec.Decision)),
		attribute.String("rein.rule", rec.Rule),
		attribute.StringSlice("rein.risk", rec.Risk),
		attribute.String("rein.policy_version", rec.PolicyVersion),
		attribute.Int64("rein.audit_index", rec.AuditIndex),
	)
	if rec.Approval != nil {
		span.SetAttributes(attribute.String("rein.approval.id", rec.Approval.ID))
	}
	if !rec.Decision.Allows() {
		span.SetStatus(codes.Unset, rec.Reason)
	}
	span.End(trace.WithTimestamp(end))
}

// approval records a resolved approval as a span from its creation to its
// resolution: how long people took, and how they decided.
func (t *tracing) approval(a *rein.Approval) {
	end := time.Now()
	if a.ResolvedAt != nil {
		end = *a.ResolvedAt
	}
	_, span := t.tracer.Start(context.Background(), "approval "+a.Tool, trace.WithTimestamp(a.CreatedAt))
	span.SetAttributes(
		attribute.String("rein.approval.id", a.ID),
		attribute.String("rein.approval.status", a.Status),
		attribute.String("rein.tenant", a.Tenant),
		attribute.String("gen_ai.tool.name", a.Tool),
		attribute.String("gen_ai.agent.name", a.Agent),
		attribute.Int("rein.approval.quorum", a.Quorum),
		attribute.Int("rein.approval.votes", len(a.Votes)),
		attribute.String("rein.check.id", a.CheckID),
	)
	for _, v := range a.Votes {
		span.AddEvent("vote", trace.WithTimestamp(v.At), trace.WithAttributes(
			attribute.String("rein.vote", v.Vote), attribute.String("rein.vote.by", v.By)))
	}
	span.End(trace.WithTimestamp(end))
}

func (t *tracing) shutdown(ctx context.Context) {
	if t != nil {
		t.provider.Shutdown(ctx)
	}
}
