package servertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/s3bucket"
)

// UniqueName is a bucket name of its own ("nuv-test-" and random hex: valid for S3, GCS and Azure).
func UniqueName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "nuv-test-" + hex.EncodeToString(b[:])
}

// S3Bucket starts (or reuses) the S3 server, creates a bucket of its own there (test setup: nuv
// itself never creates buckets) and returns its name.
func S3Bucket(t testing.TB) string {
	t.Helper()
	S3(t)
	name := UniqueName()
	b, err := s3bucket.New(context.Background(), name, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return name
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
