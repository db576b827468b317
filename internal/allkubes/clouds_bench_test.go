package allkubes

import (
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/report"
)

// BenchmarkFourClouds measures the four-cloud matrix on nuv's emulators (operation delay 200ms,
// as in TestIntegrationAllKubesFourClouds): for each of eks, aks and gke, the median of `nuv
// cluster plan -f --only NAME` of a new cluster (a whole nuv process: start-up, credentials, the
// cloud API's reads) and the emulated create (`nuv cluster apply`, to a kubeconfig and Ready
// nodes; most of it the local control plane behind the emulator), each cluster created alone so
// the figure is its own; then `nuv all-kubes -- dtest` over the four (local, eks, aks, gke): its
// wall time against the sum of its cells (the parallel matrix against running them one after the
// other), and the delete of each. Run it once:
//
//	go test -run '^$' -bench FourClouds -benchtime 1x ./internal/allkubes/
func BenchmarkFourClouds(b *testing.B) {
	const planRuns = 5
	c := startClouds(b, buildNuv(b))
	f := c.writeSpecs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := os.Stdout
		for _, k := range fourCloudTypes[1:] {
			var ds []time.Duration
			for j := 0; j < planRuns; j++ {
				t0 := time.Now()
				c.must("cluster", "plan", "-f", f, "--only", k.name)
				ds = append(ds, time.Since(t0))
			}
			sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
			fmt.Fprintf(out, "plan %-3s (new cluster, whole nuv process): median %6.0f ms of %d (min %.0f, max %.0f)\n",
				k.typ, ms(ds[len(ds)/2]), planRuns, ms(ds[0]), ms(ds[len(ds)-1]))
			b.ReportMetric(ms(ds[len(ds)/2]), "ms/plan-"+k.typ)
		}
		created := map[string]time.Duration{}
		for _, k := range fourCloudTypes {
			t0 := time.Now()
			c.must("cluster", "apply", "--yes", "-f", f, "--only", k.name)
			created[k.name] = time.Since(t0)
			what := "local create"
			if k.emulated != "" {
				what = "emulated " + k.typ + " create"
			}
			fmt.Fprintf(out, "%-20s (apply to a kubeconfig and Ready nodes): %6.1f s\n", what, created[k.name].Seconds())
			b.ReportMetric(created[k.name].Seconds(), "s/create-"+k.typ)
		}

		r := c.allKubesDtest()
		var sum float64
		for _, x := range r.report.Results {
			if x.Status != report.Passed {
				b.Fatalf("cell %s: %s: %s", x.Cluster, x.Status, x.Message)
			}
			fmt.Fprintf(out, "  all-kubes cell %-8s %-22s %6.1f s\n", x.Cluster, x.Platform.Source(), x.Seconds)
			sum += x.Seconds
		}
		if len(r.report.Results) != len(fourCloudTypes) {
			b.Fatalf("%d cells, want %d", len(r.report.Results), len(fourCloudTypes))
		}
		fmt.Fprintf(out, "all-kubes -- dtest over local+eks+aks+gke: wall %.1f s, sum of its cells %.1f s, wall/sum %.2f\n",
			r.wall.Seconds(), sum, r.wall.Seconds()/sum)
		b.ReportMetric(r.wall.Seconds(), "s/allkubes-wall")
		b.ReportMetric(sum, "s/allkubes-cells-sum")
		b.ReportMetric(r.wall.Seconds()/sum, "wall/sum")

		for _, k := range fourCloudTypes {
			t0 := time.Now()
			c.must("cluster", "delete", "--yes", k.name)
			fmt.Fprintf(out, "delete %-7s %6.1f s\n", k.name, time.Since(t0).Seconds())
		}
		if left := c.leftovers(); len(left) > 0 {
			b.Fatalf("left in the emulators: %v", left)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
