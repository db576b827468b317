// Package gcsbucket is the objstore.Bucket of a Google Cloud Storage bucket ("gs://BUCKET[/PREFIX]")
// on Google's Go SDK. The endpoint and credentials are the SDK's own: STORAGE_EMULATOR_HOST for
// an emulator (then no credentials), else Application Default Credentials. An object's version is
// its generation; conditional writes and deletes are GCS generation preconditions
// (ifGenerationMatch=0 for an absent object, ifGenerationMatch=G for generation G).
package gcsbucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"

	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
)

// Bucket is a GCS bucket under a key prefix.
type Bucket struct {
	client *storage.Client
	bucket string
	prefix string // "" or ending in "/"
	where  string
}

// New returns the bucket named bucket under prefix ("" for none); it does not reach the server
// (Check does).
func New(ctx context.Context, bucket, prefix string) (objstore.Bucket, error) {
	where := "gs://" + bucket
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		where += "/" + prefix
		prefix += "/"
	}
	if bucket == "" || strings.Contains(bucket, "/") {
		return nil, fmt.Errorf("%s: %q is not a bucket name", where, bucket)
	}
	c, err := storage.NewClient(ctx, storage.WithJSONReads())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &Bucket{client: c, bucket: bucket, prefix: prefix, where: where}, nil
}

// Where is "gs://BUCKET[/PREFIX]".
func (b *Bucket) Where() string { return b.where }

// Close releases the client's connections.
func (b *Bucket) Close() error { return b.client.Close() }

// Check fails if the bucket does not exist or cannot be read.
func (b *Bucket) Check(ctx context.Context) error {
	_, err := b.client.Bucket(b.bucket).Attrs(ctx)
	if errors.Is(err, storage.ErrBucketNotExist) {
		return fmt.Errorf("%s: bucket %q does not exist (nuv does not create buckets): %w", b.where, b.bucket, err)
	}
	if err != nil {
		return fmt.Errorf("%s: reading bucket %q: %w", b.where, b.bucket, err)
	}
	return nil
}

func (b *Bucket) object(key string) *storage.ObjectHandle {
	return b.client.Bucket(b.bucket).Object(b.prefix + key)
}

// Get returns an object's bytes and generation.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, string, error) {
	r, err := b.object(key).NewReader(ctx)
	if err != nil {
		return nil, "", b.fail("reading", key, err, "")
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, "", b.fail("reading", key, err, "")
	}
	return data, strconv.FormatInt(r.Attrs.Generation, 10), nil
}

// Put writes an object under c's generation precondition, in one request.
func (b *Bucket) Put(ctx context.Context, key string, data []byte, c objstore.Cond) (string, error) {
	o := b.object(key)
	switch {
	case c.Absent:
		o = o.If(storage.Conditions{DoesNotExist: true})
	case c.Version != "":
		gen, err := parseGeneration(c.Version)
		if err != nil {
			return "", fmt.Errorf("%s: writing %q: %w", b.where, b.prefix+key, err)
		}
		o = o.If(storage.Conditions{GenerationMatch: gen})
	}
	w := o.NewWriter(ctx)
	w.ChunkSize = 0 // one request: the object is replaced whole or not at all
	w.ContentType = "application/octet-stream"
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return "", b.putFailed(ctx, key, err, c)
	}
	if err := w.Close(); err != nil {
		return "", b.putFailed(ctx, key, err, c)
	}
	return strconv.FormatInt(w.Attrs().Generation, 10), nil
}

// Delete removes an object if it is at version ("" for any).
func (b *Bucket) Delete(ctx context.Context, key, version string) error {
	o := b.object(key)
	if version != "" {
		gen, err := parseGeneration(version)
		if err != nil {
			return fmt.Errorf("%s: deleting %q: %w", b.where, b.prefix+key, err)
		}
		// Both the generation to delete and the precondition: GCS checks ifGenerationMatch;
		// fake-gcs-server ignores it on deletes but deletes only the generation named, which
		// on a bucket without object versioning is the live one or none.
		o = o.Generation(gen).If(storage.Conditions{GenerationMatch: gen})
	}
	err := o.Delete(ctx)
	if err == nil {
		return nil
	}
	if version != "" && (errors.Is(err, storage.ErrObjectNotExist) || isCode(err, http.StatusNotFound)) {
		// That generation is gone: is the object gone too, or at another generation?
		if a, aerr := b.object(key).Attrs(ctx); aerr == nil {
			return fmt.Errorf("%s: deleting %q: %w (it is at generation %d, not %s): %w",
				b.where, b.prefix+key, objstore.ErrPrecondition, a.Generation, version, err)
		}
	}
	return b.fail("deleting", key, err, "")
}

func isCode(err error, code int) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == code
}

// List returns the keys under prefix, sorted.
func (b *Bucket) List(ctx context.Context, prefix string) ([]string, error) {
	it := b.client.Bucket(b.bucket).Objects(ctx, &storage.Query{Prefix: b.prefix + prefix})
	var keys []string
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, b.fail("listing", prefix, err, "")
		}
		if k, ok := strings.CutPrefix(a.Name, b.prefix); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

func parseGeneration(v string) (int64, error) {
	gen, err := strconv.ParseInt(v, 10, 64)
	if err != nil || gen <= 0 {
		return 0, fmt.Errorf("version %q is not a GCS generation", v)
	}
	return gen, nil
}

// putFailed explains a failed write. An upload answered 404 is about the bucket unless the
// write required a generation of an object that is gone.
func (b *Bucket) putFailed(ctx context.Context, key string, err error, c objstore.Cond) error {
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Code == http.StatusNotFound {
		if _, berr := b.client.Bucket(b.bucket).Attrs(ctx); errors.Is(berr, storage.ErrBucketNotExist) {
			return fmt.Errorf("%s: writing %q: bucket %q does not exist: %w", b.where, b.prefix+key, b.bucket, err)
		}
	}
	cond := ""
	if c.Version != "" {
		cond = "version"
	}
	return b.fail("writing", key, err, cond)
}

// fail wraps a server's answer with the store, the operation and the object's name, and maps it
// onto objstore's errors: a failed precondition is ErrPrecondition, a missing object ErrNotFound
// (or ErrPrecondition where the write required it at a generation).
func (b *Bucket) fail(op, key string, err error, cond string) error {
	name := b.prefix + key
	code := 0
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		code = ge.Code
	}
	switch {
	case code == http.StatusPreconditionFailed:
		return fmt.Errorf("%s: %s %q: %w: %w", b.where, op, name, objstore.ErrPrecondition, err)
	case errors.Is(err, storage.ErrBucketNotExist):
		return fmt.Errorf("%s: %s %q: bucket %q does not exist: %w", b.where, op, name, b.bucket, err)
	case errors.Is(err, storage.ErrObjectNotExist) || code == http.StatusNotFound:
		if cond == "version" {
			return fmt.Errorf("%s: %s %q: %w (it is gone): %w", b.where, op, name, objstore.ErrPrecondition, err)
		}
		return fmt.Errorf("%s: %s %q: %w: %w", b.where, op, name, objstore.ErrNotFound, err)
	}
	return fmt.Errorf("%s: %s %q: %w", b.where, op, name, err)
}
