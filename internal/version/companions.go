package version

import (
	"fmt"
	"sort"
	"strings"
)

// Companions holds the SHA-256 of the companion release archives (nuv-kube, nuv-node) that were
// built with this nuv, stamped at release time (-ldflags -X): "name_os_arch=<hex>,..." for every
// platform of the release, e.g. "nuv-kube_linux_amd64=3f1c…,nuv-node_linux_amd64=9ab2…". A build
// that was not released (go build, go install, a snapshot without companions) has none and
// never trusts a downloaded companion archive.
var Companions = ""

// CompanionsVar is the linker name of Companions.
const CompanionsVar = "github.com/nuv-dev/nuv/internal/version.Companions"

// CompanionKey is the key of a companion archive in Companions: "nuv-kube_linux_amd64".
func CompanionKey(name, goos, goarch string) string { return name + "_" + goos + "_" + goarch }

// FormatCompanions renders sums (key -> hex SHA-256) as Companions' value, sorted by key.
func FormatCompanions(sums map[string]string) string {
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + sums[k]
	}
	return strings.Join(parts, ",")
}

// ParseCompanions reads a Companions value. An entry that is not "key=<64 hex digits>" is an
// error: a release stamps nothing else.
func ParseCompanions(s string) (map[string]string, error) {
	sums := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" || !isHexSHA256(v) {
			return nil, fmt.Errorf("companion checksum %q: want name_os_arch=<SHA-256 in hex>", part)
		}
		sums[k] = strings.ToLower(v)
	}
	return sums, nil
}

func isHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range strings.ToLower(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// OperatorSources is the hash of the reference operator's sources a release was made from
// (rendercache.OperatorSourceHash of the release's tree), stamped with Companions when the release
// has a whisk-operator archive: a project whose operator sources hash the same runs the released
// operator on a local cluster's host instead of building it with Go. "" otherwise.
var OperatorSources = ""

// OperatorSourcesVar is the linker name of OperatorSources.
const OperatorSourcesVar = "github.com/nuv-dev/nuv/internal/version.OperatorSources"
