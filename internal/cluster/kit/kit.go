// Package kit is what every nuv cluster provider needs and would otherwise write once more: the
// cluster tag nuv puts on what it makes, the provider's environment and logger defaults, the
// kubeconfig resource (its path under the project's clusters/ folder, its rendering with an
// embedded or exec credential, its atomic 0600 write), the wait for a long operation with the
// 15-second progress rule and a deadline, the codecs of the string fields plans compare, and the
// table of resource kinds through which a provider carries out a plan's changes (Kinds), one
// handler per kind.
//
// A provider is one package built from these parts; the engine (package engine) computes and
// applies plans over the cluster.Provider interface and knows no provider.
package kit

import (
	"context"
	"fmt"
	"maps"
	"os"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
)

// TagCluster marks every cloud resource nuv makes for a cluster, valued with the cluster's name:
// resources are found by it, and a same-named resource without it is another's (Foreign). It is
// the label nuv's nodes carry (cluster.LabelCluster), so one key says "nuv's" everywhere.
const TagCluster = cluster.LabelCluster

// LabelCluster is TagCluster where label keys allow no '.' or '/' (Google Cloud labels): the same
// mark, spelled as GKE clusters made by nuv have always carried it.
const LabelCluster = "nuv-cluster"

// Tags are a cluster's user tags plus nuv's own mark (key: TagCluster or LabelCluster), a copy.
func Tags(user map[string]string, key, cluster string) map[string]string {
	t := maps.Clone(user)
	if t == nil {
		t = map[string]string{}
	}
	t[key] = cluster
	return t
}

// Getenv is getenv, or os.Getenv when nil: providers read their environment through it so tests
// can hand them their own.
func Getenv(getenv func(string) string) func(string) string {
	if getenv == nil {
		return os.Getenv
	}
	return getenv
}

// Log is l, or a quiet logger when nil.
func Log(l cli.Logger) cli.Logger {
	if l == nil {
		return cli.Quiet()
	}
	return l
}

// StatusFromList is the Status of a provider that reads one cluster as it lists them all: the
// cluster named name among list's, cluster.ErrNotFound if there is none.
func StatusFromList(ctx context.Context, list func(context.Context) ([]cluster.Info, error), name string) (cluster.Info, error) {
	all, err := list(ctx)
	if err != nil {
		return cluster.Info{}, err
	}
	for _, i := range all {
		if i.Name == name {
			return i, nil
		}
	}
	return cluster.Info{}, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
}
