package kubecmd

import "testing"

// BenchmarkUseOffline measures `nuv kube use N --offline` in-process (without nuv's start-up,
// which bench/kube includes); it prints ns/op.
func BenchmarkUseOffline(b *testing.B) {
	f := newFixture(b, sample())
	for i := 0; i < b.N; i++ {
		if _, e, code := f.run("use", "2", "--offline"); code != 0 {
			b.Fatal(e)
		}
	}
}
