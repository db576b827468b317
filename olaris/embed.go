// Package olaris is nuv's own task bundle, compiled into the binary so that a first run works
// offline: when no other bundle is found (NUV_ROOT, a parent folder with nuvroot.json, ./olaris,
// ~/.nuv/<version>/olaris) nuv extracts this one once per content into ~/.nuv/cache/bundle.
//
// The bundle format is the one of published nuv bundles: every folder holds a nuvfile.yml (a
// Taskfile), optionally nuvopts.txt or docopts.md (docopt usage) and .env; nuvroot.json at the top
// holds the bundle version and `config` defaults. Files and folders whose names start with "." or
// "_" are never embedded (a developer's olaris/.env must not end up in the binary), so a folder's
// .env is only seen in a checked-out bundle.
package olaris

import (
	"embed"
	"io/fs"
)

//go:embed [^._]*
var files embed.FS

// FS returns the embedded bundle; its root holds nuvroot.json.
func FS() fs.FS { return files }
