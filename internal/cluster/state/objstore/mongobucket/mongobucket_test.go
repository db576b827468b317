package mongobucket_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/mongobucket"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore/objstoretest"
	"github.com/nuv-dev/nuv/internal/cluster/state/statetest"
	"github.com/nuv-dev/nuv/internal/testservers"
)

// ferretDB is FerretDB on its SQLite backend, started once for the package.
var ferretDB = testservers.NewShared(func() (*testservers.Server, error) {
	path, err := testservers.Program{Name: "FerretDB", Env: "NUV_TEST_FERRETDB", Script: "mongo",
		Cached: "test-servers/ferretdb-v1.24.2/ferretdb"}.Path()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "nuv-ferretdb-")
	if err != nil {
		return nil, err
	}
	s, err := testservers.Start("ferretdb", path, func(port int) []string {
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
		return nil, err
	}
	s.Dir = dir
	return s, nil
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

// ferretDBRace is why the suites that race writers at one version do not run on FerretDB.
const ferretDBRace = "FerretDB 1.24.2 (SQLite) does not apply an update's filter atomically: it finds the " +
	"documents, then updates them by _id, so several writers at one version all succeed (5 of 8 in " +
	"objstoretest); the lock and the conditional writes are only certified on MongoDB: set " +
	"NUV_TEST_MONGODB_URI=mongodb://HOST:PORT/ to run these suites on a real server"

// needAtomicUpdates skips a suite that races writers at one version on FerretDB.
func needAtomicUpdates(t *testing.T) {
	t.Helper()
	if os.Getenv("NUV_TEST_MONGODB_URI") == "" {
		serverURI(t) // a missing FerretDB fails as elsewhere
		t.Skip(ferretDBRace)
	}
}

// newDB makes a database with the nuv_state collection on the server (nuv never does) and
// returns its URI.
func newDB(t testing.TB) string {
	t.Helper()
	base := serverURI(t)
	ctx := context.Background()
	name := fmt.Sprintf("nuvtest%d_%d", os.Getpid(), dbs.Add(1))
	uri := base + name
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	if err := c.Database(name).CreateCollection(ctx, mongobucket.Collection); err != nil {
		t.Fatalf("creating %s.%s: %v", name, mongobucket.Collection, err)
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
	needAtomicUpdates(t)
	uri := newDB(t)
	b := open(t, uri)
	if b.Where() != uri {
		t.Errorf("Where: %q, want %q", b.Where(), uri)
	}
	objstoretest.Run(t, b)
}

func TestIntegrationMongoStore(t *testing.T) {
	needAtomicUpdates(t)
	var mu sync.Mutex
	uris := map[string]string{}
	statetest.Run(t, statetest.Backend{
		// The stores of one test share a database (two nuvs on one store).
		New: func(t *testing.T) state.Store {
			mu.Lock()
			uri, ok := uris[t.Name()]
			if !ok {
				uri = newDB(t)
				uris[t.Name()] = uri
			}
			mu.Unlock()
			return objstore.New(open(t, uri))
		},
		Corrupt: func(t *testing.T, s state.Store, name string) {
			if _, err := s.(*objstore.Store).Bucket().Put(context.Background(), objstore.RecordKey(name), []byte("{not json"), objstore.Cond{}); err != nil {
				t.Fatal(err)
			}
		},
	})
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
	v1, err := b.Put(ctx, "records/c.json", []byte("one"), objstore.Cond{Absent: true})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := b.Put(ctx, "records/c.json", []byte("two"), objstore.Cond{Version: v1})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, answer string
		do           func() error
		want         error
	}{
		{"put at a stale version", "at version", func() error {
			_, err := b.Put(ctx, "records/c.json", []byte("three"), objstore.Cond{Version: v1})
			return err
		}, objstore.ErrPrecondition},
		{"put if absent over a document", "E11000", func() error {
			_, err := b.Put(ctx, "records/c.json", []byte("three"), objstore.Cond{Absent: true})
			return err
		}, objstore.ErrPrecondition},
		{"put at a version of a gone document", "at version", func() error {
			_, err := b.Put(ctx, "records/gone.json", []byte("x"), objstore.Cond{Version: v1})
			return err
		}, objstore.ErrPrecondition},
		{"delete at a stale version", "not at version", func() error { return b.Delete(ctx, "records/c.json", v1) }, objstore.ErrPrecondition},
		{"delete of a missing document", "no documents", func() error { return b.Delete(ctx, "records/none.json", "") }, objstore.ErrNotFound},
		{"get of a missing document", "no documents", func() error { _, _, err := b.Get(ctx, "records/none.json"); return err }, objstore.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if !errors.Is(err, c.want) {
				t.Fatalf("%v, want %v", err, c.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, uri) || !strings.Contains(msg, "records/") || !strings.Contains(msg, c.answer) {
				t.Errorf("%q does not name the store, the document and the server's answer (%s)", msg, c.answer)
			}
			data, v, err := b.Get(ctx, "records/c.json")
			if err != nil || !bytes.Equal(data, []byte("two")) || v != v2 {
				t.Fatalf("after a refused write: %q %q %v, want %q %q", data, v, err, "two", v2)
			}
		})
	}
	// A prefix with regular expression characters lists only itself.
	for _, k := range []string{"a.b/1", "axb/1", "a.b/2"} {
		if _, err := b.Put(ctx, k, []byte("x"), objstore.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	if keys, err := b.List(ctx, "a.b/"); err != nil || strings.Join(keys, " ") != "a.b/1 a.b/2" {
		t.Errorf("List(a.b/): %q %v", keys, err)
	}
	if err := b.Delete(ctx, "records/c.json", v2); err != nil {
		t.Fatalf("delete at the current version: %v", err)
	}
}

// BenchmarkIntegrationMongo prints the latency of a conditional Put and of a Get on the server,
// and the server's startup time and memory.
func BenchmarkIntegrationMongo(b *testing.B) {
	srv := ferretDB.Get(b)
	ctx := context.Background()
	bk := open(b, newDB(b))
	body := bytes.Repeat([]byte("x"), 4096)
	v, err := bk.Put(ctx, "k", body, objstore.Cond{Absent: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("put", func(b *testing.B) {
		for range b.N {
			if v, err = bk.Put(ctx, "k", body, objstore.Cond{Version: v}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get", func(b *testing.B) {
		for range b.N {
			if _, _, err := bk.Get(ctx, "k"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Logf("ferretdb: ready in %v, RSS %d KiB", srv.Startup.Round(time.Millisecond), srv.RSS())
}

// TestIntegrationMongoOnFerretDB runs on FerretDB what does not race writers at one version:
// objects round-trip, writes if absent race to exactly one winner (an insert under a unique _id
// is atomic there), a write at a stale version is refused, List of a prefix.
func TestIntegrationMongoOnFerretDB(t *testing.T) {
	ctx := context.Background()
	b := open(t, newDB(t))
	if err := b.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		key := fmt.Sprintf("locks/c%d.json", round)
		var wins atomic.Int64
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := b.Put(ctx, key, []byte(strconv.Itoa(i)), objstore.Cond{Absent: true})
				switch {
				case err == nil:
					wins.Add(1)
				case !errors.Is(err, objstore.ErrPrecondition):
					t.Errorf("contender %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d of 8 writes if absent won, want 1", round, wins.Load())
		}
	}
	v, err := b.Put(ctx, "records/b.json", []byte("1"), objstore.Cond{})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := b.Put(ctx, "records/b.json", []byte("2"), objstore.Cond{Version: v})
	if err != nil || v2 == v {
		t.Fatalf("put at the current version: %q %v", v2, err)
	}
	if _, err := b.Put(ctx, "records/b.json", []byte("3"), objstore.Cond{Version: v}); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("put at a stale version: %v", err)
	}
	if _, err := b.Put(ctx, "records/a.json", []byte("1"), objstore.Cond{}); err != nil {
		t.Fatal(err)
	}
	keys, err := b.List(ctx, "records/")
	if err != nil || strings.Join(keys, " ") != "records/a.json records/b.json" {
		t.Fatalf("List: %q %v", keys, err)
	}
}
