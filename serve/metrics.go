package serve

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/webhook"
)

// metrics are the Prometheus series beyond the check counters: build,
// approvals waiting and how long people take, webhook deliveries, policy
// files refused.
type metrics struct {
	decisionTime  *prometheus.HistogramVec
	delivered     *prometheus.CounterVec
	policyRefused prometheus.Counter
	policyBroken  prometheus.Gauge
}

func newMetrics(reg *prometheus.Registry, store rein.ApprovalStore) *metrics {
	m := &metrics{
		decisionTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rein_approval_decision_seconds",
			Help:    "Time from an approval's creation to its resolution, by outcome (approved, rejected, expired).",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600}}, []string{"outcome"}),
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rein_webhook_deliveries_total",
			Help: "Webhook delivery attempts, by result (delivered or failed)."}, []string{"result"}),
		policyRefused: prometheus.NewCounter(prometheus.CounterOpts{Name: "rein_policy_reload_failures_total",
			Help: "Policy file changes refused (the last good version stayed active)."}),
		policyBroken: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rein_policy_refused",
			Help: "1 while a policy file's current content is refused and the last good version serves, else 0 (updated by /readyz)."}),
	}
	version, revision, goVersion := rein.Version, "", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rein_build_info",
		Help: "Always 1: the running build's version, Go version and source revision."}, []string{"version", "goversion", "revision"})
	build.WithLabelValues(version, goVersion, revision).Set(1)
	pending := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rein_approvals_pending",
		Help: "Approvals waiting for people, in every tenant (counted up to 10000 per scrape)."}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		list, err := store.Approvals(ctx, rein.AllTenants, rein.ApprovalFilter{Status: rein.StatusPending, Limit: 10000})
		if err != nil {
			return -1
		}
		return float64(len(list))
	})
	reg.MustRegister(m.decisionTime, m.delivered, m.policyRefused, m.policyBroken, build, pending)
	return m
}

func (m *metrics) approvalResolved(a *rein.Approval) {
	end := time.Now()
	if a.ResolvedAt != nil {
		end = *a.ResolvedAt
	}
	m.decisionTime.WithLabelValues(a.Status).Observe(end.Sub(a.CreatedAt).Seconds())
}

// deliveries counts each delivery on its way to the delivery log.
func (m *metrics) deliveries(log webhook.Log) webhook.Log { return countedLog{log, m.delivered} }

type countedLog struct {
	webhook.Log
	n *prometheus.CounterVec
}

func (l countedLog) LogDelivery(ctx context.Context, d *webhook.Delivery) error {
	result := "failed"
	if d.Delivered {
		result = "delivered"
	}
	l.n.WithLabelValues(result).Inc()
	return l.Log.LogDelivery(ctx, d)
}
