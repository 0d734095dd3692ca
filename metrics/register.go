package metrics

import "github.com/prometheus/client_golang/prometheus"

// Register adds a collector of series that live beside the command's
// (pacing's plan and the charts' ages), served on the same /metrics.
func (m *Metrics) Register(c prometheus.Collector) { m.reg.MustRegister(c) }

// Register adds collectors to serve's /metrics (the kept answers').
func (m *API) Register(cs ...prometheus.Collector) { m.reg.MustRegister(cs...) }
