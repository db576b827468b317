// Package objstore keeps nuv's cluster state (records, locks, apply history) in any store that
// can write an object only if it is absent, or only if it is still at the version read before:
// S3 (If-None-Match / If-Match), GCS (generation preconditions), Azure Blob (ETag conditions),
// MongoDB (the next version inserted under a unique _id). One Store over the Bucket interface
// serves them all, so the locking rules are written once and every backend passes the same
// conformance suites (statetest.Run for the records and locks, objstoretest for the bucket
// semantics). docs/state.md tells users how to choose a store, docs/state-stores.md each one's
// settings and primitives.
package objstore

import (
	"context"
	"errors"
)

// Errors of buckets; test with errors.Is.
var (
	// ErrNotFound: no object has the key.
	ErrNotFound = errors.New("object not found")
	// ErrPrecondition: the condition of a write or delete did not hold (the object exists where
	// it must be absent, or is at another version than the one given).
	ErrPrecondition = errors.New("object was changed by someone else")
)

// Cond is the condition a Put must meet; the zero Cond writes unconditionally.
type Cond struct {
	// Absent writes only if no object has the key (S3 If-None-Match: *, GCS ifGenerationMatch=0,
	// Azure If-None-Match: *, MongoDB insert of the first version under a unique _id).
	Absent bool
	// Version writes only if the object is at this version, as Get or Put returned it (S3
	// If-Match ETag, GCS ifGenerationMatch, Azure If-Match ETag, MongoDB insert of the next version
	// under a unique _id).
	Version string
}

// Bucket is one container of objects (an S3 or GCS bucket, an Azure container, a MongoDB
// collection) under a key prefix. Keys are slash-separated relative names ("records/dev.json");
// the bucket adds its prefix. Implementations are safe for concurrent use and must give every
// successful write a version no earlier write of the key had (the Store never writes the same
// bytes twice, so an ETag that is a content hash qualifies).
type Bucket interface {
	// Where names the bucket for messages and saved plans, in the form the user wrote
	// ("s3://team-state/nuv", "gs://b", "azblob://c/p", "mongodb://host:27017/db"), without
	// credentials.
	Where() string
	// Check fails if the bucket cannot be reached or does not exist (nuv never creates one); the
	// error names the bucket and the server's answer.
	Check(ctx context.Context) error
	// Get returns an object's bytes and version; ErrNotFound if there is none.
	Get(ctx context.Context, key string) (data []byte, version string, err error)
	// Put writes an object if c holds and returns its new version; ErrPrecondition if c does not
	// hold. A failed Put leaves the previous object as it was.
	Put(ctx context.Context, key string, data []byte, c Cond) (version string, err error)
	// Delete removes an object if it is at version ("" deletes whatever version); ErrNotFound if
	// there is none, ErrPrecondition if it is at another version.
	Delete(ctx context.Context, key, version string) error
	// List returns the keys that start with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
}
