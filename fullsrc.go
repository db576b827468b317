package nuv

import "embed"

// FullSources holds the sources of nuv's full program (cmd/nuv-full and every package of this
// module it imports, with the files they embed): the slim `nuv` binary carries them and builds
// the full program from them once, cached by content (internal/front, internal/companion), the
// first time a command needs more than the daily verbs. Directories of other modules (test
// fixtures with a go.mod of their own) are left out by go:embed itself.
//
//go:embed go.mod go.sum *.go cmd internal operator olaris
var FullSources embed.FS
