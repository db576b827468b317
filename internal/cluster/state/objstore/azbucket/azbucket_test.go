package azbucket_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/azbucket"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/objstoretest"
	"github.com/nuv-dev/nuv/internal/cluster/state/statetest"
	"github.com/nuv-dev/nuv/internal/testservers"
)

// accountKey is the key of the storage account the tests make on Azurite, of their own run.
var accountKey = testservers.NewAzuriteKey()

// azurite is Azurite's blob service, started once for the package, keeping its blobs on disk.
var azurite = testservers.NewShared(func() (*testservers.Server, error) {
	s, env, err := testservers.StartAzurite(accountKey)
	if err != nil {
		return nil, err
	}
	if err := env.Set(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
})

func connString(addr string) string { return testservers.AzuriteConnString(addr, accountKey) }

func TestMain(m *testing.M) {
	code := m.Run()
	azurite.Stop()
	os.Exit(code)
}

var containers atomic.Int64

// newBucket makes a container on the server (nuv never does) and returns nuv's view of it.
func newBucket(t testing.TB, prefix string) (objstore.Bucket, string) {
	t.Helper()
	azurite.Get(t)
	ctx := context.Background()
	name := fmt.Sprintf("nuv-test-%d-%d", os.Getpid(), containers.Add(1))
	if err := testservers.CreateAzureContainer(ctx, os.Getenv("AZURE_STORAGE_CONNECTION_STRING"), name); err != nil {
		t.Fatal(err)
	}
	b, err := azbucket.New(ctx, name, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return b, name
}

func TestIntegrationAzureBucket(t *testing.T) {
	b, name := newBucket(t, "team/nuv")
	if got, want := b.Where(), "azblob://"+name+"/team/nuv"; got != want {
		t.Errorf("Where: %q, want %q", got, want)
	}
	objstoretest.Run(t, b)
}

func TestIntegrationAzureStore(t *testing.T) {
	b, _ := newBucket(t, "")
	// The stores of one test share a prefix of the container (two nuvs on one store).
	statetest.Run(t, objstoretest.StoreBackend(func(t *testing.T) objstore.Bucket {
		nb, err := azbucket.New(context.Background(), strings.TrimPrefix(b.Where(), "azblob://"), t.Name())
		if err != nil {
			t.Fatal(err)
		}
		return nb
	}))
}

func TestIntegrationAzureMissingContainer(t *testing.T) {
	azurite.Get(t)
	b, err := azbucket.New(context.Background(), "nuv-no-such-container", "p")
	if err != nil {
		t.Fatal(err)
	}
	objstoretest.CheckMissing(t, b, "nuv-no-such-container")
	_, err = b.Put(context.Background(), "records/a.json", []byte("x"), objstore.Cond{Absent: true})
	if err == nil || !strings.Contains(err.Error(), "nuv-no-such-container") {
		t.Errorf("Put into a missing container: %v", err)
	}
	if strings.Contains(err.Error(), accountKey) {
		t.Errorf("the error shows the account key: %v", err)
	}
}

// TestIntegrationAzureCredentials: without an account nuv says which variables to set, and a
// connection string's key shows in no error and not in Where.
func TestIntegrationAzureCredentials(t *testing.T) {
	srv := azurite.Get(t)
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "")
	t.Setenv("AZURE_STORAGE_ACCOUNT", "")
	if _, err := azbucket.New(context.Background(), "nuv-creds", ""); err == nil || !strings.Contains(err.Error(), "AZURE_STORAGE_ACCOUNT") {
		t.Errorf("no account: %v", err)
	}
	wrong := strings.Replace(connString(srv.Addr), accountKey, base64.StdEncoding.EncodeToString([]byte("not the key")), 1)
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", wrong)
	b, err := azbucket.New(context.Background(), "nuv-creds", "p")
	if err != nil {
		t.Fatal(err)
	}
	err = b.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("Check with a wrong key: %v", err)
	}
	for _, s := range []string{err.Error(), b.Where()} {
		if strings.Contains(s, "AccountKey") || strings.Contains(s, accountKey) {
			t.Errorf("%q shows the connection string", s)
		}
	}
}

// TestIntegrationAzureErrors: a refused write names the store, the object and the server's
// answer, and leaves the object readable as it was; ETags are checked on delete too.
func TestIntegrationAzureErrors(t *testing.T) {
	b, name := newBucket(t, "p")
	objstoretest.RefusedWrites(t, b, objstoretest.Words{Version: "ETag", AVersion: "an ETag", Object: "blob", AnObject: "a blob"}, func(t *testing.T, _ int, _ error, msg string) {
		if !strings.Contains(msg, "azblob://"+name+"/p") || !strings.Contains(msg, "p/records/") {
			t.Errorf("%q does not name the store and the object", msg)
		}
		if !strings.Contains(msg, "server answered") {
			t.Errorf("%q does not give the server's answer", msg)
		}
	})
}

// BenchmarkIntegrationAzure prints the latency of a conditional Put and of a Get on the server,
// and the server's startup time and memory.
func BenchmarkIntegrationAzure(b *testing.B) {
	srv := azurite.Get(b)
	bk, _ := newBucket(b, "")
	objstoretest.Bench(b, bk, "azurite-blob", srv)
}
