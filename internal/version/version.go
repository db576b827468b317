// Package version holds nuv's version, the one place it is stamped at build time:
//
//	go build -ldflags "-X github.com/nuv-dev/nuv/internal/version.Version=1.2.3" ./nuv
//
// The slim front binary passes its own stamp on when it builds the full program, so both print
// the same version.
package version

// Version is nuv's version.
var Version = "0.1.0-dev"
