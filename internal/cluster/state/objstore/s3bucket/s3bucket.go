// Package s3bucket is the objstore.Bucket on an S3 bucket (AWS S3 or any server that speaks its
// API with conditional writes: SeaweedFS, MinIO, ...), through AWS's Go SDK. The endpoint, region
// and credentials come only from the SDK's own settings and chain (AWS_ENDPOINT_URL_S3 or
// AWS_ENDPOINT_URL, AWS_REGION, AWS_PROFILE, AWS_ACCESS_KEY_ID..., the shared config files,
// instance roles); with an endpoint set, requests are path-style (http://host/BUCKET/KEY), which
// every S3 server on a host of its own answers.
//
// Conditions map onto S3's conditional requests: Cond.Absent is PutObject with If-None-Match: *,
// Cond.Version is PutObject with If-Match: ETAG, Delete at a version is DeleteObject with
// If-Match: ETAG. A version is the object's ETag (an MD5 of its bytes for a single-part upload,
// which is all this package writes).
package s3bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
)

// Bucket is one S3 bucket under a key prefix.
type Bucket struct {
	name   string
	prefix string // "" or ending in "/"
	c      *s3.Client
}

var _ objstore.Bucket = (*Bucket)(nil)

// New is the bucket name with keys under prefix, reached with the SDK's default configuration
// (nothing is sent until the first call; Check tells whether the bucket is there).
func New(ctx context.Context, name, prefix string) (*Bucket, error) {
	if name == "" {
		return nil, errors.New("s3: no bucket name")
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("s3://%s: AWS configuration: %w", name, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1" // S3 needs one to sign; a custom endpoint usually ignores it
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if o.BaseEndpoint != nil && *o.BaseEndpoint != "" {
			o.UsePathStyle = true
		}
		// the objects are small and written whole; ask for checksums only where S3 needs them
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &Bucket{name: name, prefix: prefix, c: c}, nil
}

// Where is s3://BUCKET[/PREFIX].
func (b *Bucket) Where() string {
	if b.prefix == "" {
		return "s3://" + b.name
	}
	return "s3://" + b.name + "/" + strings.TrimSuffix(b.prefix, "/")
}

func (b *Bucket) key(k string) string { return b.prefix + k }

// status is the HTTP status of a failed S3 call (0 if it got none) and its error code.
func status(err error) (int, string) {
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode(), code
	}
	return 0, code
}

func (b *Bucket) fail(op, key string, err error) error {
	return fmt.Errorf("%s s3://%s/%s: %w", op, b.name, b.key(key), err)
}

// Check heads the bucket.
func (b *Bucket) Check(ctx context.Context) error {
	_, err := b.c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &b.name})
	if err == nil {
		return nil
	}
	if st, code := status(err); st == http.StatusNotFound || code == "NoSuchBucket" || code == "NotFound" {
		return fmt.Errorf("S3 bucket %s does not exist (nuv does not create buckets: create it, or name another in the state store's location)", b.name)
	}
	return fmt.Errorf("S3 bucket %s: %w", b.name, err)
}

// Get reads an object.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, string, error) {
	out, err := b.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.name, Key: aws.String(b.key(key))})
	if err != nil {
		if st, code := status(err); st == http.StatusNotFound && code != "NoSuchBucket" {
			return nil, "", b.fail("get", key, objstore.ErrNotFound)
		}
		return nil, "", b.fail("get", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", b.fail("get", key, err)
	}
	return data, aws.ToString(out.ETag), nil
}

// Put writes an object with If-None-Match: * or If-Match: ETAG as c says.
func (b *Bucket) Put(ctx context.Context, key string, data []byte, c objstore.Cond) (string, error) {
	in := &s3.PutObjectInput{Bucket: &b.name, Key: aws.String(b.key(key)), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), ContentType: aws.String("application/json")}
	if c.Absent {
		in.IfNoneMatch = aws.String("*")
	}
	if c.Version != "" {
		in.IfMatch = aws.String(c.Version)
	}
	out, err := b.c.PutObject(ctx, in)
	if err != nil {
		st, code := status(err)
		conditional := c.Absent || c.Version != ""
		switch {
		case st == http.StatusPreconditionFailed,
			// a conditional write racing another on the same key (AWS: retry; here the race is lost)
			conditional && (st == http.StatusConflict || code == "ConditionalRequestConflict"),
			// If-Match on a missing object
			c.Version != "" && st == http.StatusNotFound && code != "NoSuchBucket":
			return "", b.fail("put", key, fmt.Errorf("%w: %v", objstore.ErrPrecondition, err))
		}
		return "", b.fail("put", key, err)
	}
	if out.ETag == nil || *out.ETag == "" {
		return "", b.fail("put", key, errors.New("the server answered no ETag"))
	}
	return *out.ETag, nil
}

// Delete removes an object, with If-Match: ETAG if version is given. S3 answers a delete of a
// missing object with success, so the object is looked at first to tell ErrNotFound.
func (b *Bucket) Delete(ctx context.Context, key, version string) error {
	if _, err := b.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.name, Key: aws.String(b.key(key))}); err != nil {
		if st, _ := status(err); st == http.StatusNotFound {
			return b.fail("delete", key, objstore.ErrNotFound)
		}
		return b.fail("delete", key, err)
	}
	in := &s3.DeleteObjectInput{Bucket: &b.name, Key: aws.String(b.key(key))}
	if version != "" {
		in.IfMatch = aws.String(version)
	}
	_, err := b.c.DeleteObject(ctx, in)
	if err == nil {
		return nil
	}
	st, code := status(err)
	if version != "" && (st == http.StatusPreconditionFailed || st == http.StatusConflict || code == "ConditionalRequestConflict") {
		return b.fail("delete", key, fmt.Errorf("%w: %v", objstore.ErrPrecondition, err))
	}
	if st == http.StatusNotFound && code != "NoSuchBucket" {
		return b.fail("delete", key, objstore.ErrNotFound)
	}
	return b.fail("delete", key, err)
}

// List lists the keys under prefix, sorted (S3 lists in UTF-8 binary order).
func (b *Bucket) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(b.c, &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: aws.String(b.key(prefix))})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list s3://%s/%s: %w", b.name, b.key(prefix), err)
		}
		for _, o := range page.Contents {
			keys = append(keys, strings.TrimPrefix(aws.ToString(o.Key), b.prefix))
		}
	}
	return keys, nil
}

// CreateBucket creates the bucket (for tests: nuv itself never creates one).
func (b *Bucket) CreateBucket(ctx context.Context) error {
	_, err := b.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &b.name})
	if err != nil {
		return fmt.Errorf("create S3 bucket %s: %w", b.name, err)
	}
	return nil
}
