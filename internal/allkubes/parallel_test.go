package allkubes

import "testing"

func TestAutoSlots(t *testing.T) {
	const gb = 1 << 30
	for _, tc := range []struct {
		name                  string
		cores                 int
		avail                 uint64
		nLocal, nRemote       int
		wantLocal, wantRemote int
	}{
		{"ten local clusters on 2 cores and 20 GB: CPU bounds them", 2, 20 * gb, 10, 0, 6, 1},
		{"few local clusters: all at once", 2, 20 * gb, 3, 0, 3, 1},
		{"memory bounds local runs", 8, 1 * gb, 20, 0, 2, 1},
		{"remote clusters cost no CPU here", 2, 20 * gb, 0, 40, 1, 40},
		{"remote runs bounded by memory", 2, 3 * gb, 0, 100, 1, 20},
		{"mixed", 4, 16 * gb, 5, 7, 5, 7},
		{"no memory figure still runs one", 1, 0, 4, 4, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, r := autoSlots(tc.cores, tc.avail, tc.nLocal, tc.nRemote)
			if l != tc.wantLocal || r != tc.wantRemote {
				t.Errorf("autoSlots = %d local, %d remote; want %d, %d", l, r, tc.wantLocal, tc.wantRemote)
			}
		})
	}
}

func TestParseParallel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		auto bool
		err  bool
	}{{"auto", 0, true, false}, {"0", 0, false, false}, {"4", 4, false, false}, {"-1", 0, false, true}, {"lots", 0, false, true}} {
		n, auto, err := ParseParallel(tc.in)
		if n != tc.n || auto != tc.auto || (err != nil) != tc.err {
			t.Errorf("%q: %d %v %v", tc.in, n, auto, err)
		}
	}
}
