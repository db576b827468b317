package spec

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxTTL bounds spec.ttl and `nuv cluster extend`: a test cluster meant to live longer than a
// year should not carry an expiry at all.
const MaxTTL = 366 * 24 * time.Hour

// ParseTTL reads a cluster's time to live: a Go duration ("90m", "4h", "1h30m") or whole days
// ("2d"), positive and at most MaxTTL.
func ParseTTL(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (want e.g. 90m, 4h or 2d)", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a duration (want e.g. 90m, 4h or 2d)", s)
		}
	}
	switch {
	case d <= 0:
		return 0, fmt.Errorf("%q: a time to live must be positive", s)
	case d > MaxTTL:
		return 0, fmt.Errorf("%q: at most %dd (leave ttl out for a cluster that does not expire)", s, MaxTTL/(24*time.Hour))
	}
	return d, nil
}

// Marks are nuv's marks on a cluster's cloud resources besides its name: when it expires (its
// state record's expiry; nil: never) and which state store owns it (state.OwnerOf), so `nuv
// cluster gc` can find an expired cluster whose record was lost and tell its own clusters from
// another team's. The engine sets them on the spec it hands a provider; providers write them as
// tags or labels (package kit) and never compare them in plans.
type Marks struct {
	ExpiresAt *time.Time
	Owner     string
}
