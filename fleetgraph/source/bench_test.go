package source_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/fleetgraph/source"
)

// targetState writes a target-state file of n targets shaped like Pacto's
// fixture (labels, coverage, a finding on every tenth).
func targetState(n int) []byte {
	var b strings.Builder
	b.WriteString("schemaVersion: pacto.dev/fleet-targets/v1\ntargets:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - scope: cluster-%d\n    kind: kubernetes-workload\n    name: ns-%d/svc-%d\n    service: svc-%d\n    requestedRef: svc-%d:1.%d.0\n    compliance: Compliant\n    coverage: {evaluated: 4, required: 4}\n    evidenceAt: 2026-07-31T12:00:00Z\n    labels: {env: production, region: eu}\n", i%7, i%50, i, i%3000, i%3000, i%9)
		if i%10 == 0 {
			b.WriteString("    findings:\n      - {code: DRIFT, severity: error, message: drifted}\n")
		}
	}
	return []byte(b.String())
}

// BenchmarkDecodeTargetState decodes 5k and 50k targets: the ratio of
// ns/op and B/op shows whether decoding grows linearly.
func BenchmarkDecodeTargetState(b *testing.B) {
	for _, n := range []int{5_000, 50_000} {
		raw := targetState(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				ts, _, err := source.DecodeTargetState(raw)
				if err != nil || len(ts) != n {
					b.Fatalf("%d targets, %v", len(ts), err)
				}
			}
		})
	}
}
