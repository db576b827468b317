// Package azbucket is the objstore.Bucket of an Azure Blob Storage container
// ("azblob://CONTAINER[/PREFIX]") on Azure's Go SDK. The account and its credentials come from the
// environment as Azure's tools read them: AZURE_STORAGE_CONNECTION_STRING (an account key or SAS,
// and the endpoint: how Azurite is reached), else AZURE_STORAGE_ACCOUNT with azidentity's default
// credential chain (environment, workload identity, managed identity, Azure CLI, ...) against
// AZURE_STORAGE_BLOB_ENDPOINT or the account's https://ACCOUNT.blob.core.windows.net/. An object's
// version is its blob's ETag; conditional writes and deletes are ETag conditions (If-None-Match: *
// for an absent blob, If-Match: ETAG for a version).
package azbucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
)

// Bucket is a blob container under a key prefix.
type Bucket struct {
	c      *container.Client
	name   string
	prefix string // "" or ending in "/"
	where  string
}

// New returns the container named name under prefix ("" for none), with the account and
// credentials of the environment; it does not reach the server (Check does).
func New(ctx context.Context, name, prefix string) (objstore.Bucket, error) {
	where := "azblob://" + name
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		where += "/" + prefix
		prefix += "/"
	}
	if name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%s: %q is not a container name", where, name)
	}
	client, err := newClient()
	if err != nil {
		// The SDK's errors about a connection string do not quote it.
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &Bucket{c: client.ServiceClient().NewContainerClient(name), name: name, prefix: prefix, where: where}, nil
}

func newClient() (*azblob.Client, error) {
	if cs := os.Getenv("AZURE_STORAGE_CONNECTION_STRING"); cs != "" {
		c, err := azblob.NewClientFromConnectionString(cs, nil)
		if err != nil {
			return nil, fmt.Errorf("AZURE_STORAGE_CONNECTION_STRING: %w", err)
		}
		return c, nil
	}
	account := os.Getenv("AZURE_STORAGE_ACCOUNT")
	if account == "" {
		return nil, errors.New("no storage account: set AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT (with Azure credentials nuv finds as the Azure CLI and SDKs do)")
	}
	endpoint := os.Getenv("AZURE_STORAGE_BLOB_ENDPOINT")
	if endpoint == "" {
		endpoint = "https://" + account + ".blob.core.windows.net/"
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("Azure credentials for account %s: %w", account, err)
	}
	return azblob.NewClient(endpoint, cred, nil)
}

// Where is "azblob://CONTAINER[/PREFIX]".
func (b *Bucket) Where() string { return b.where }

// Check fails if the container does not exist or cannot be read.
func (b *Bucket) Check(ctx context.Context) error {
	_, err := b.c.GetProperties(ctx, nil)
	if bloberror.HasCode(err, bloberror.ContainerNotFound) {
		return fmt.Errorf("%s: container %q does not exist (nuv does not create containers): %w", b.where, b.name, answer(err))
	}
	if err != nil {
		return fmt.Errorf("%s: reading container %q: %w", b.where, b.name, answer(err))
	}
	return nil
}

// Get returns a blob's bytes and ETag.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, string, error) {
	resp, err := b.c.NewBlockBlobClient(b.prefix+key).DownloadStream(ctx, nil)
	if err != nil {
		return nil, "", b.fail("reading", key, err, false)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", b.fail("reading", key, err, false)
	}
	if resp.ETag == nil {
		return nil, "", fmt.Errorf("%s: reading %q: the server gave no ETag", b.where, b.prefix+key)
	}
	return data, string(*resp.ETag), nil
}

// Put uploads a blob in one request (replaced whole or not at all) under c's ETag condition.
func (b *Bucket) Put(ctx context.Context, key string, data []byte, c objstore.Cond) (string, error) {
	mac := &blob.ModifiedAccessConditions{}
	switch {
	case c.Absent:
		mac.IfNoneMatch = ptr(azcore.ETagAny)
	case c.Version != "":
		mac.IfMatch = ptr(azcore.ETag(c.Version))
	}
	resp, err := b.c.NewBlockBlobClient(b.prefix+key).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)),
		&blockblob.UploadOptions{
			HTTPHeaders:      &blob.HTTPHeaders{BlobContentType: ptr("application/octet-stream")},
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: mac},
		})
	if err != nil {
		return "", b.fail("writing", key, err, c.Version != "")
	}
	if resp.ETag == nil {
		return "", fmt.Errorf("%s: writing %q: the server gave no ETag", b.where, b.prefix+key)
	}
	return string(*resp.ETag), nil
}

// Delete removes a blob if its ETag is version ("" for any).
func (b *Bucket) Delete(ctx context.Context, key, version string) error {
	var o *blob.DeleteOptions
	if version != "" {
		o = &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: ptr(azcore.ETag(version))}}}
	}
	if _, err := b.c.NewBlockBlobClient(b.prefix+key).Delete(ctx, o); err != nil {
		return b.fail("deleting", key, err, false)
	}
	return nil
}

// List returns the keys under prefix, sorted.
func (b *Bucket) List(ctx context.Context, prefix string) ([]string, error) {
	p := b.prefix + prefix
	pager := b.c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &p})
	var keys []string
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, b.fail("listing", prefix, err, false)
		}
		for _, it := range page.Segment.BlobItems {
			if it.Name == nil {
				continue
			}
			if k, ok := strings.CutPrefix(*it.Name, b.prefix); ok {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys, nil
}

func ptr[T any](v T) *T { return &v }

// fail wraps a server's answer with the store, the operation and the blob's name, and maps it
// onto objstore's errors. A write at a version of a blob that is gone did not meet its condition.
func (b *Bucket) fail(op, key string, err error, atVersion bool) error {
	name := b.prefix + key
	switch {
	case bloberror.HasCode(err, bloberror.ConditionNotMet, bloberror.BlobAlreadyExists):
		return fmt.Errorf("%s: %s %q: %w: %w", b.where, op, name, objstore.ErrPrecondition, answer(err))
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		return fmt.Errorf("%s: %s %q: container %q does not exist: %w", b.where, op, name, b.name, answer(err))
	case bloberror.HasCode(err, bloberror.BlobNotFound) && atVersion:
		return fmt.Errorf("%s: %s %q: %w (it is gone): %w", b.where, op, name, objstore.ErrPrecondition, answer(err))
	case bloberror.HasCode(err, bloberror.BlobNotFound):
		return fmt.Errorf("%s: %s %q: %w: %w", b.where, op, name, objstore.ErrNotFound, answer(err))
	}
	return fmt.Errorf("%s: %s %q: %w", b.where, op, name, answer(err))
}

// answer is the server's answer in one line ("412 ConditionNotMet"): the SDK's own message spans
// the request's URL and every response header.
func answer(err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return &serverError{msg: fmt.Sprintf("server answered %d %s %s", re.StatusCode,
			http.StatusText(re.StatusCode), re.ErrorCode), err: err}
	}
	return err
}

type serverError struct {
	msg string
	err error
}

func (e *serverError) Error() string { return e.msg }
func (e *serverError) Unwrap() error { return e.err }
