package testservers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The versions of the servers hack/state-servers.sh installs (its FAKE_GCS_VERSION,
// AZURITE_VERSION and FERRETDB_VERSION).
const (
	FakeGCSVersion  = "v1.56.1"
	AzuriteVersion  = "3.37.0"
	FerretDBVersion = "v1.24.2"
)

// The programs, found as Program.Path says.
var (
	FakeGCS = Program{Name: "fake-gcs-server", Env: "NUV_TEST_FAKE_GCS", Script: "gcs",
		Cached: "test-servers/fake-gcs-server-" + FakeGCSVersion + "/fake-gcs-server"}
	Azurite = Program{Name: "Azurite", Env: "NUV_TEST_AZURITE", Script: "azure",
		Cached: "test-servers/azurite-" + AzuriteVersion + "/node_modules/.bin/azurite-blob"}
	FerretDB = Program{Name: "FerretDB", Env: "NUV_TEST_FERRETDB", Script: "mongo",
		Cached: "test-servers/ferretdb-" + FerretDBVersion + "/ferretdb"}
)

// Env is the environment that points a store's SDK (and so nuv) at a server, "KEY=VALUE" each.
type Env []string

// Get returns the value of key, "" if Env has none.
func (e Env) Get(key string) string {
	for _, kv := range e {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v
		}
	}
	return ""
}

// Set sets every variable in this process (for its SDK clients; not from parallel tests).
func (e Env) Set() error {
	for _, kv := range e {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("setting %s: %w", k, err)
		}
	}
	return nil
}

// StartFakeGCS starts fake-gcs-server, keeping its objects on disk (in the Server's Dir). Its Env,
// STORAGE_EMULATOR_HOST, points Google's SDK at it, which then needs no credentials.
func StartFakeGCS() (*Server, Env, error) {
	path, err := FakeGCS.Path()
	if err != nil {
		return nil, nil, err
	}
	root, err := os.MkdirTemp("", "nuv-fake-gcs-")
	if err != nil {
		return nil, nil, err
	}
	s, err := Start("fake-gcs-server", path, func(port int) []string {
		return []string{"-scheme", "http", "-host", "127.0.0.1", "-port", strconv.Itoa(port),
			"-backend", "filesystem", "-filesystem-root", filepath.Join(root, "data"), "-log-level", "error"}
	}, func(addr string) error {
		resp, err := http.Get("http://" + addr + "/storage/v1/b")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("listing buckets: %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		os.RemoveAll(root)
		return nil, nil, err
	}
	s.Dir = root
	return s, Env{"STORAGE_EMULATOR_HOST=" + s.Addr}, nil
}

// CreateGCSBucket makes a bucket on the server STORAGE_EMULATOR_HOST names (StartFakeGCS's Env,
// set).
func CreateGCSBucket(ctx context.Context, name string) error {
	c, err := storage.NewClient(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Bucket(name).Create(ctx, "nuv-test", nil); err != nil {
		return fmt.Errorf("creating bucket %s: %w", name, err)
	}
	return nil
}

// AzuriteAccount is the storage account StartAzurite makes on Azurite (AZURITE_ACCOUNTS).
const AzuriteAccount = "nuvtest"

// NewAzuriteKey returns a random account key, for StartAzurite: no well-known key is needed.
func NewAzuriteKey() string {
	var k [64]byte
	_, _ = rand.Read(k[:])
	return base64.StdEncoding.EncodeToString(k[:])
}

// AzuriteConnString is the connection string of AzuriteAccount with key on the Azurite at addr.
func AzuriteConnString(addr, key string) string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=http://%s/%s;",
		AzuriteAccount, key, addr, AzuriteAccount)
}

// StartAzurite starts Azurite's blob service with AzuriteAccount, whose key is key, keeping its
// blobs on disk (in the Server's Dir). Its Env, AZURE_STORAGE_CONNECTION_STRING, points Azure's
// SDK at it.
func StartAzurite(key string) (*Server, Env, error) {
	path, err := Azurite.Path()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "nuv-azurite-")
	if err != nil {
		return nil, nil, err
	}
	s, err := start("azurite-blob", path, []string{"AZURITE_ACCOUNTS=" + AzuriteAccount + ":" + key}, func(port int) []string {
		return []string{"--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port), "--location", dir,
			"--skipApiVersionCheck", "--disableTelemetry", "--silent"}
	}, func(addr string) error {
		resp, err := http.Get("http://" + addr + "/" + AzuriteAccount + "?comp=list")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil // any answer (403: the request is not signed) is a server ready
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	s.Dir = dir
	return s, Env{"AZURE_STORAGE_CONNECTION_STRING=" + AzuriteConnString(s.Addr, key)}, nil
}

// CreateAzureContainer makes a container with the connection string connString (StartAzurite's
// Env's).
func CreateAzureContainer(ctx context.Context, connString, name string) error {
	c, err := azblob.NewClientFromConnectionString(connString, nil)
	if err != nil {
		return err
	}
	if _, err := c.CreateContainer(ctx, name, nil); err != nil {
		return fmt.Errorf("creating container %s: %w", name, err)
	}
	return nil
}

// StartFerretDB starts FerretDB on its SQLite backend, keeping its databases on disk (in the
// Server's Dir), and returns its URI, "mongodb://127.0.0.1:PORT/" (a database's name follows).
func StartFerretDB() (*Server, string, error) {
	path, err := FerretDB.Path()
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "nuv-ferretdb-")
	if err != nil {
		return nil, "", err
	}
	s, err := Start("ferretdb", path, func(port int) []string {
		return []string{"--handler=sqlite", "--sqlite-url=file:" + dir + "/", "--state-dir=" + dir,
			"--listen-addr=127.0.0.1:" + strconv.Itoa(port), "--debug-addr=-", "--telemetry=disable",
			"--log-level=error"}
	}, func(addr string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + addr + "/"))
		if err != nil {
			return err
		}
		defer c.Disconnect(ctx)
		return c.Ping(ctx, nil)
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	s.Dir = dir
	return s, "mongodb://" + s.Addr + "/", nil
}

// CreateMongoCollection makes the collection in the database of uri ("mongodb://HOST/DB").
func CreateMongoCollection(ctx context.Context, uri, collection string) error {
	opts := options.Client().ApplyURI(uri)
	c, err := mongo.Connect(opts)
	if err != nil {
		return err
	}
	defer c.Disconnect(ctx)
	db := uri[strings.LastIndex(uri, "/")+1:]
	if i := strings.IndexByte(db, '?'); i >= 0 {
		db = db[:i]
	}
	if err := c.Database(db).CreateCollection(ctx, collection); err != nil {
		return fmt.Errorf("creating %s.%s: %w", db, collection, err)
	}
	return nil
}
