package deploy

import (
	"context"
	"errors"

	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/version"
)

// releasedOperator returns the reference operator of this nuv's release (its whisk-operator
// archive: beside nuv, unpacked in the cache, or fetched and verified against the checksum
// compiled into nuv) when the project's operator sources are the release's own (sum is their
// hash; the release stamps its hash in version.OperatorSources), so that an installed nuv runs a
// local cluster's operator without Go. "" when that does not apply (a build that was not
// released, a project whose operator differs); a fetch that fails says so and the caller builds
// with Go; an archive refused (a checksum that does not match) is an error.
func releasedOperator(ctx context.Context, o Options, sum string) (string, error) {
	if version.OperatorSources == "" || version.OperatorSources != sum {
		return "", nil
	}
	b := companion.Builder{Getenv: o.Getenv, Log: o.Log}
	bin, err := b.Released(ctx, companion.ProgramOperator, false)
	if err != nil {
		if errors.Is(err, companion.ErrRefused) || ctx.Err() != nil {
			return "", err
		}
		o.Log.Infof("could not fetch nuv's release of the reference operator (%v): building it with Go", err)
		return "", nil
	}
	return bin, nil
}
