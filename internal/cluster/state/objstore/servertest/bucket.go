package servertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/s3bucket"
)

// UniqueName is a bucket name of its own ("nuv-test-" and random hex: valid for S3, GCS and Azure).
func UniqueName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "nuv-test-" + hex.EncodeToString(b[:])
}

// S3Bucket starts (or reuses) the S3 server and returns the name of the bucket this test binary
// shares, creating it on the first call (test setup: nuv itself never creates buckets). A test
// works under a key prefix of its own (UniqueName): one bucket per binary keeps the server small
// (SeaweedFS gives each bucket volumes of its own).
func S3Bucket(t testing.TB) string {
	t.Helper()
	S3(t)
	sharedBucket.once.Do(func() {
		sharedBucket.name = UniqueName()
		sharedBucket.err = CreateS3Bucket(context.Background(), sharedBucket.name)
	})
	if sharedBucket.err != nil {
		t.Fatal(sharedBucket.err)
	}
	return sharedBucket.name
}

var sharedBucket struct {
	once sync.Once
	name string
	err  error
}

// CreateS3Bucket creates a bucket on the server the environment points at (test and benchmark
// setup: nuv itself never creates buckets).
func CreateS3Bucket(ctx context.Context, name string) error {
	b, err := s3bucket.New(ctx, name, "")
	if err != nil {
		return err
	}
	return b.CreateBucket(ctx)
}
