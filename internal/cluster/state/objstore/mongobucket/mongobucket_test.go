package mongobucket_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/mongobucket"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/objstoretest"
	"github.com/nuv-dev/nuv/internal/cluster/state/statetest"
	"github.com/nuv-dev/nuv/internal/testservers"
)

// ferretDB is FerretDB on its SQLite backend, started once for the package.
var ferretDB = testservers.NewShared(func() (*testservers.Server, error) {
	s, _, err := testservers.StartFerretDB()
	return s, err
})

func TestMain(m *testing.M) {
	code := m.Run()
	ferretDB.Stop()
	os.Exit(code)
}

var dbs atomic.Int64

// serverURI is the server the tests use: NUV_TEST_MONGODB_URI (a real MongoDB someone runs,
// "mongodb://127.0.0.1:27017/"), else FerretDB started for the package.
func serverURI(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("NUV_TEST_MONGODB_URI"); u != "" {
		return strings.TrimSuffix(u, "/") + "/"
	}
	return "mongodb://" + ferretDB.Get(t).Addr + "/"
}

// newDB makes a database with the nuv_state collection on the server (nuv never does) and
// returns its URI.
func newDB(t testing.TB) string {
	t.Helper()
	base := serverURI(t)
	ctx := context.Background()
	name := fmt.Sprintf("nuvtest%d_%d", os.Getpid(), dbs.Add(1))
	uri := base + name
	if err := testservers.CreateMongoCollection(ctx, uri, mongobucket.Collection); err != nil {
		t.Fatal(err)
	}
	return uri
}

func open(t testing.TB, uri string) objstore.Bucket {
	t.Helper()
	b, err := mongobucket.New(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.(*mongobucket.Bucket).Close(context.Background()) })
	return b
}

func TestIntegrationMongoBucket(t *testing.T) {
	uri := newDB(t)
	b := open(t, uri)
	if b.Where() != uri {
		t.Errorf("Where: %q, want %q", b.Where(), uri)
	}
	objstoretest.Run(t, b)
}

func TestIntegrationMongoStore(t *testing.T) {
	serverURI(t) // skipped under -short here, not in each case
	var mu sync.Mutex
	uris := map[string]string{}
	// The stores of one test share a database (two nuvs on one store).
	statetest.Run(t, objstoretest.StoreBackend(func(t *testing.T) objstore.Bucket {
		mu.Lock()
		defer mu.Unlock()
		uri, ok := uris[t.Name()]
		if !ok {
			uri = newDB(t)
			uris[t.Name()] = uri
		}
		return open(t, uri)
	}))
}

// TestIntegrationMongoMissingDatabase: a database with no collection does not exist to nuv.
func TestIntegrationMongoMissingDatabase(t *testing.T) {
	objstoretest.CheckMissing(t, open(t, serverURI(t)+"nuvnosuchdb"), "nuvnosuchdb")
}

func TestRedact(t *testing.T) {
	for _, c := range []struct{ uri, want string }{
		{"mongodb://h:27017/db", "mongodb://h:27017/db"},
		{"mongodb://u:s3cret@h1:1,h2:2/db?replicaSet=rs&authSource=admin", "mongodb://h1:1,h2:2/db"},
		{"mongodb+srv://u:p%40ss@cluster0.example.net/team?retryWrites=true", "mongodb+srv://cluster0.example.net/team"},
		{"mongodb://u:pa/ss@h/db", "mongodb://h/db"},
	} {
		if got := mongobucket.Redact(c.uri); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.uri, got, c.want)
		}
	}
	for _, uri := range []string{"mongodb://h:27017", "mongodb://u:s3cret@h:27017/"} {
		_, err := mongobucket.New(context.Background(), uri)
		if err == nil || !strings.Contains(err.Error(), "names no database") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("New(%q): %v", uri, err)
		}
	}
	if _, err := mongobucket.New(context.Background(), "mongodb://u:s3cret@h:notaport/db"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a bad URI: %v", err)
	}
}

// TestIntegrationMongoErrors: a refused write names the store, the document and the server's
// answer, and leaves the document readable as it was; versions are checked on delete too.
func TestIntegrationMongoErrors(t *testing.T) {
	ctx := context.Background()
	uri := newDB(t)
	b := open(t, uri)
	// The server's answer to each refused operation, in RefusedWrites' order.
	answers := []string{"at version", "exists (version 2)", "at version", "not at version", "no documents", "no documents"}
	objstoretest.RefusedWrites(t, b, objstoretest.Words{Version: "version", AVersion: "a version", Object: "document", AnObject: "a document"}, func(t *testing.T, i int, _ error, msg string) {
		if !strings.Contains(msg, uri) || !strings.Contains(msg, "records/") || !strings.Contains(msg, answers[i]) {
			t.Errorf("%q does not name the store, the document and the server's answer (%s)", msg, answers[i])
		}
	})
	// A prefix with regular expression characters lists only itself.
	for _, k := range []string{"a.b/1", "axb/1", "a.b/2"} {
		if _, err := b.Put(ctx, k, []byte("x"), objstore.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	if keys, err := b.List(ctx, "a.b/"); err != nil || strings.Join(keys, " ") != "a.b/1 a.b/2" {
		t.Errorf("List(a.b/): %q %v", keys, err)
	}
}

// BenchmarkIntegrationMongo prints the latency of a conditional Put and of a Get on the server,
// and the server's startup time and memory.
func BenchmarkIntegrationMongo(b *testing.B) {
	srv := ferretDB.Get(b)
	objstoretest.Bench(b, open(b, newDB(b)), "ferretdb", srv)
}

// TestIntegrationMongoVersions: what the layout of one document per version must keep. Versions
// keep growing across a delete, so a version from before it is refused after it; a writer whose
// insert comes after many later writes is still refused (old versions keep their _id); old
// versions lose their data; a key ending like an _id is a key of its own.
func TestIntegrationMongoVersions(t *testing.T) {
	ctx := context.Background()
	uri := newDB(t)
	b := open(t, uri)
	k := "locks/dev.json"
	v1, err := b.Put(ctx, k, []byte("one"), objstore.Cond{Absent: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, k, v1); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, k, v1); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("delete of a deleted object: %v, want ErrNotFound", err)
	}
	if _, err := b.Put(ctx, k, []byte("x"), objstore.Cond{Version: v1}); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("put at the version of a deleted object: %v", err)
	}
	v3, err := b.Put(ctx, k, []byte("three"), objstore.Cond{Absent: true})
	if err != nil {
		t.Fatal(err)
	}
	if v3 == v1 {
		t.Fatalf("a version repeated after a delete: %s", v3)
	}
	if _, err := b.Put(ctx, k, []byte("x"), objstore.Cond{Version: v1}); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("put at a version from before a delete: %v", err)
	}
	seen := map[string]bool{v1: true, v3: true}
	v := v3
	for i := range 10 {
		if v, err = b.Put(ctx, k, []byte(strconv.Itoa(i)), objstore.Cond{Version: v}); err != nil {
			t.Fatal(err)
		}
		if seen[v] {
			t.Fatalf("version %s repeated", v)
		}
		seen[v] = true
	}
	mustGet(t, b, k, "9", v)

	// The stored documents: one per version, all but the last two emptied.
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	coll := c.Database(uri[strings.LastIndex(uri, "/")+1:]).Collection(mongobucket.Collection)
	var docs []struct {
		ID   string  `bson:"_id"`
		Seq  int64   `bson:"seq"`
		Data *[]byte `bson:"data"`
		Old  bool    `bson:"old"`
	}
	cur, err := coll.Find(ctx, bson.D{{Key: "key", Value: k}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 13 {
		t.Fatalf("%d documents for 13 writes", len(docs))
	}
	for i, d := range docs {
		if want := fmt.Sprintf("%s@%020d", k, i+1); d.ID != want || d.Seq != int64(i+1) {
			t.Errorf("document %d: _id %q seq %d, want %q", i, d.ID, d.Seq, want)
		}
		if old := i < len(docs)-2; d.Old != old || (old && d.Data != nil) || (!old && d.Data == nil) {
			t.Errorf("document %s: old %v, data %v", d.ID, d.Old, d.Data != nil)
		}
	}

	// A writer that read the first version, whose insert arrives after all those writes: the
	// _id it inserts is still taken.
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: docs[1].ID}, {Key: "key", Value: k}, {Key: "seq", Value: int64(2)}}); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("inserting an old version's _id again: %v, want a duplicate key error", err)
	}

	// Keys that look like versions of another key.
	lookalike := fmt.Sprintf("%s@%020d", k, 14)
	if _, err := b.Put(ctx, lookalike, []byte("other"), objstore.Cond{Absent: true}); err != nil {
		t.Fatal(err)
	}
	mustGet(t, b, k, "9", v)
	mustGet(t, b, lookalike, "other", "1")
	if keys, err := b.List(ctx, "locks/"); err != nil || strings.Join(keys, " ") != k+" "+lookalike {
		t.Fatalf("List: %q %v", keys, err)
	}
	if err := b.Delete(ctx, k, ""); err != nil {
		t.Fatal(err)
	}
	if keys, err := b.List(ctx, "locks/"); err != nil || strings.Join(keys, " ") != lookalike {
		t.Fatalf("List after a delete: %q %v", keys, err)
	}
}

func mustGet(t *testing.T, b objstore.Bucket, key, want, version string) {
	t.Helper()
	data, v, err := b.Get(context.Background(), key)
	if err != nil || string(data) != want || v != version {
		t.Fatalf("Get %s: %q %q %v, want %q %q", key, data, v, err, want, version)
	}
}
