package localkube

import (
	"context"
	"errors"

	"github.com/nuv-dev/nuv/internal/companion"
)

// releaseCached returns nuv-kube from this nuv's release archive unpacked in the cache before.
func (c Companion) releaseCached() (Binaries, bool) {
	bin, o := c.builder().ReleaseCached(companion.ProgramKube)
	if bin == "" {
		return Binaries{}, false
	}
	return Binaries{Path: bin, Source: o.Source() + ": " + bin}, true
}

// released returns nuv-kube from this nuv's release: beside nuv, or its archive fetched from the
// release location and verified against the checksum compiled into nuv (not offline). ok is false
// when neither applies (a build that was not released); an archive that could not be fetched is
// an error the caller may fall back from, one refused (companion.ErrRefused) is not.
func (c Companion) released(ctx context.Context, offline bool) (Binaries, bool, error) {
	b := c.builder()
	bin, err := b.Beside(companion.ProgramKube)
	if err != nil {
		return Binaries{}, false, err
	}
	if bin != "" {
		return Binaries{Path: bin, Source: "nuv's release, unpacked beside nuv: " + bin}, true, nil
	}
	if bin, err = b.FetchRelease(ctx, companion.ProgramKube, offline); err != nil || bin == "" {
		return Binaries{}, false, err
	}
	if got, ok := c.releaseCached(); ok {
		return got, true, nil
	}
	return Binaries{Path: bin, Source: "nuv's release archive: " + bin}, true, nil
}

// isRefused says whether err is a release archive or companion nuv refused.
func isRefused(err error) bool { return errors.Is(err, companion.ErrRefused) }
