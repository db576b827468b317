// Package stores opens the state store a location names (NUV_STATE, --state): the directory and
// Kubernetes stores of package state, and the shared object stores of package objstore over S3
// (s3://BUCKET[/PREFIX]), Google Cloud Storage (gs://BUCKET[/PREFIX]), Azure Blob Storage
// (azblob://CONTAINER[/PREFIX]) and MongoDB (mongodb://HOST[:PORT]/DB, mongodb+srv://...).
//
// An object store's endpoint and credentials come from its SDK's own settings and chain, never
// from the location: AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL and the AWS credential chain for S3,
// STORAGE_EMULATOR_HOST and Application Default Credentials for GCS,
// AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT with the Azure credential chain for
// Azure, the URI itself for MongoDB (its own form of settings).
package stores

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/azbucket"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/gcsbucket"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/mongobucket"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/s3bucket"
)

// Opener makes the bucket of a location of its scheme; a bad location is a *state.LocationError.
type Opener func(ctx context.Context, u *url.URL) (objstore.Bucket, error)

// openers are the object stores by URL scheme.
var openers = map[string]Opener{
	"s3": func(ctx context.Context, u *url.URL) (objstore.Bucket, error) {
		return s3bucket.New(ctx, u.Host, strings.TrimPrefix(u.Path, "/"))
	},
	"gs": func(ctx context.Context, u *url.URL) (objstore.Bucket, error) {
		return gcsbucket.New(ctx, u.Host, strings.TrimPrefix(u.Path, "/"))
	},
	"azblob": func(ctx context.Context, u *url.URL) (objstore.Bucket, error) {
		return azbucket.New(ctx, u.Host, strings.TrimPrefix(u.Path, "/"))
	},
	"mongodb":     openMongo,
	"mongodb+srv": openMongo,
}

// openMongo opens the MongoDB database the URI names (its own settings, credentials included,
// live in the URI: the MongoDB convention).
func openMongo(ctx context.Context, u *url.URL) (objstore.Bucket, error) {
	return mongobucket.New(ctx, u.String())
}

// bucketSchemes name a bucket or container as the URL's host, keys under its path.
var bucketSchemes = map[string]bool{"s3": true, "gs": true, "azblob": true}

// Kinds lists the location forms, for messages.
func Kinds() string {
	kinds := []string{"dir:PATH", "kube:NAMESPACE@KUBECONFIG"}
	schemes := make([]string, 0, len(openers))
	for s := range openers {
		schemes = append(schemes, s)
	}
	sort.Strings(schemes)
	for _, s := range schemes {
		switch {
		case bucketSchemes[s]:
			what := "BUCKET"
			if s == "azblob" {
				what = "CONTAINER"
			}
			kinds = append(kinds, s+"://"+what+"[/PREFIX]")
		case s == "mongodb":
			kinds = append(kinds, "mongodb[+srv]://HOST[:PORT]/DB")
		case s == "mongodb+srv":
		default:
			kinds = append(kinds, s+"://...")
		}
	}
	return strings.Join(kinds, ", ")
}

// Remote reports whether location names a store reached over the network (Kubernetes or an
// object store), which a shell completion must not wait for.
func Remote(location string) bool {
	if strings.HasPrefix(location, "kube:") {
		return true
	}
	scheme, _, ok := strings.Cut(location, "://")
	return ok && scheme != "" && !strings.Contains(scheme, "/")
}

// Open returns the store location names: "", "dir:PATH", a plain path and "kube:..." as
// state.Open says; SCHEME://... an object store over the bucket its opener makes. Nothing is
// sent to an object store until it is used (Check tells whether it is there).
func Open(location, home, defaultKubeconfig string) (state.Store, error) {
	scheme, _, isURL := strings.Cut(location, "://")
	if !isURL || strings.Contains(scheme, "/") || strings.HasPrefix(location, "dir:") {
		st, err := state.Open(location, home, defaultKubeconfig)
		if le, ok := err.(*state.LocationError); ok && strings.HasPrefix(le.Msg, "unknown kind") {
			return nil, &state.LocationError{Location: location, Msg: "unknown kind (valid: " + Kinds() + ")"}
		}
		return st, err
	}
	b, err := OpenBucket(context.Background(), location)
	if err != nil {
		return nil, err
	}
	return objstore.New(b), nil
}

// OpenBucket returns the bucket an object store location names.
func OpenBucket(ctx context.Context, location string) (objstore.Bucket, error) {
	u, err := url.Parse(location)
	if err != nil {
		return nil, &state.LocationError{Location: location, Msg: err.Error()}
	}
	open, ok := openers[u.Scheme]
	if !ok {
		return nil, &state.LocationError{Location: location, Msg: fmt.Sprintf("unknown kind %q (valid: %s)", u.Scheme+"://", Kinds())}
	}
	if bucketSchemes[u.Scheme] {
		switch {
		case u.User != nil:
			return nil, &state.LocationError{Location: redacted(u), Msg: "credentials do not belong in the location: they come from the SDK's own settings and credential chain"}
		case u.Host == "":
			return nil, &state.LocationError{Location: location, Msg: "no bucket: want " + u.Scheme + "://BUCKET[/PREFIX]"}
		case u.RawQuery != "" || u.Fragment != "":
			return nil, &state.LocationError{Location: location, Msg: "a query or fragment is not part of a store location: want " + u.Scheme + "://BUCKET[/PREFIX]"}
		}
	}
	b, err := open(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("state store %s: %w", redacted(u), err)
	}
	return b, nil
}

func redacted(u *url.URL) string { return u.Redacted() }
