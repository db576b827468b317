// Package mongobucket is the objstore.Bucket of a MongoDB database ("mongodb://HOST[:PORT]/DB",
// "mongodb+srv://HOST/DB") on MongoDB's Go driver. The URI is the driver's own (credentials,
// replica set, TLS and the rest in its user info and options); nuv's objects are documents of the
// collection nuv_state, {_id: key, data: bytes, version: string}. A write if absent is an insert
// (a duplicate _id fails it), a write or delete at a version is filtered on {_id, version}, and
// every write gives the document a new version (an ObjectID: unique across writers).
//
// MongoDB creates a database at its first write, so a mistyped name would silently start an empty
// store: nuv requires the database to exist already (to hold at least one collection, best
// nuv_state: db.createCollection("nuv_state")), as it requires an existing bucket elsewhere.
package mongobucket

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
)

// Collection is the collection nuv's objects live in.
const Collection = "nuv_state"

// Bucket is the nuv_state collection of a database.
type Bucket struct {
	client *mongo.Client
	db     string
	c      *mongo.Collection
	where  string
}

type doc struct {
	ID      string `bson:"_id"`
	Data    []byte `bson:"data"`
	Version string `bson:"version"`
}

// New connects to the database the URI names (lazily: Check reaches the server).
func New(ctx context.Context, uri string) (objstore.Bucket, error) {
	where := Redact(uri)
	cs, err := connstring.ParseAndValidate(uri)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", where, redactErr(err, uri))
	}
	if cs.Database == "" {
		return nil, fmt.Errorf("%s: the URI names no database (mongodb://HOST[:PORT]/DB)", where)
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetTimeout(30 * time.Second))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", where, redactErr(err, uri))
	}
	return &Bucket{client: client, db: cs.Database, c: client.Database(cs.Database).Collection(Collection), where: where}, nil
}

// Redact is uri without its user info and options: mongodb://HOST[:PORT]/DB.
func Redact(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		// An URI url cannot parse (a host list with a password holding '/', ...): keep only its
		// scheme, hosts and path, never what is before an '@'.
		s := uri
		scheme, rest, ok := strings.Cut(s, "://")
		if !ok {
			return "mongodb://?"
		}
		if i := strings.LastIndex(rest, "@"); i >= 0 {
			rest = rest[i+1:]
		}
		rest, _, _ = strings.Cut(rest, "?")
		return scheme + "://" + rest
	}
	u.User = nil
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// redactErr keeps the URI's secrets out of a driver's error that may quote it.
func redactErr(err error, uri string) string {
	msg := err.Error()
	if u, perr := url.Parse(uri); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "REDACTED")
		}
	}
	return strings.ReplaceAll(msg, uri, Redact(uri))
}

// Where is the URI without user info and options.
func (b *Bucket) Where() string { return b.where }

// Close disconnects.
func (b *Bucket) Close(ctx context.Context) error { return b.client.Disconnect(ctx) }

// Check pings the server and fails if the database holds no collection (it does not exist) or
// cannot be read.
func (b *Bucket) Check(ctx context.Context) error {
	names, err := b.client.Database(b.db).ListCollectionNames(ctx, bson.D{}, options.ListCollections().SetAuthorizedCollections(true))
	if err != nil {
		return fmt.Errorf("%s: reading database %q: %w", b.where, b.db, err)
	}
	if len(names) == 0 {
		return fmt.Errorf("%s: database %q does not exist (nuv does not create databases: create it with db.createCollection(%q))",
			b.where, b.db, Collection)
	}
	return nil
}

// Get returns a document's data and version.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, string, error) {
	var d doc
	err := b.c.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, "", b.fail("reading", key, objstore.ErrNotFound, err)
	}
	if err != nil {
		return nil, "", b.fail("reading", key, nil, err)
	}
	return d.Data, d.Version, nil
}

// Put inserts (c.Absent), updates at a version (c.Version) or replaces a document.
func (b *Bucket) Put(ctx context.Context, key string, data []byte, c objstore.Cond) (string, error) {
	if data == nil {
		data = []byte{}
	}
	v := bson.NewObjectID().Hex()
	switch {
	case c.Absent:
		_, err := b.c.InsertOne(ctx, doc{ID: key, Data: data, Version: v})
		if mongo.IsDuplicateKeyError(err) {
			return "", b.fail("writing", key, objstore.ErrPrecondition, err)
		}
		if err != nil {
			return "", b.fail("writing", key, nil, err)
		}
	case c.Version != "":
		r, err := b.c.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "version", Value: c.Version}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "data", Value: data}, {Key: "version", Value: v}}}})
		if err != nil {
			return "", b.fail("writing", key, nil, err)
		}
		if r.MatchedCount == 0 {
			return "", b.fail("writing", key, objstore.ErrPrecondition,
				fmt.Errorf("no document %q at version %s", key, c.Version))
		}
	default:
		_, err := b.c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}}, doc{ID: key, Data: data, Version: v},
			options.Replace().SetUpsert(true))
		if mongo.IsDuplicateKeyError(err) { // two upserts of a new key at once: the other won, then ours
			_, err = b.c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}}, doc{ID: key, Data: data, Version: v},
				options.Replace().SetUpsert(true))
		}
		if err != nil {
			return "", b.fail("writing", key, nil, err)
		}
	}
	return v, nil
}

// Delete removes a document if it is at version ("" for any).
func (b *Bucket) Delete(ctx context.Context, key, version string) error {
	filter := bson.D{{Key: "_id", Value: key}}
	if version != "" {
		filter = append(filter, bson.E{Key: "version", Value: version})
	}
	r, err := b.c.DeleteOne(ctx, filter)
	if err != nil {
		return b.fail("deleting", key, nil, err)
	}
	if r.DeletedCount == 1 {
		return nil
	}
	if version == "" {
		return b.fail("deleting", key, objstore.ErrNotFound, mongo.ErrNoDocuments)
	}
	// Not at that version: gone, or moved on.
	n, err := b.c.CountDocuments(ctx, bson.D{{Key: "_id", Value: key}})
	if err != nil {
		return b.fail("deleting", key, nil, err)
	}
	if n == 0 {
		return b.fail("deleting", key, objstore.ErrNotFound, mongo.ErrNoDocuments)
	}
	return b.fail("deleting", key, objstore.ErrPrecondition, fmt.Errorf("document %q is not at version %s", key, version))
}

// List returns the keys that start with prefix, sorted.
func (b *Bucket) List(ctx context.Context, prefix string) ([]string, error) {
	filter := bson.D{}
	if prefix != "" {
		filter = bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^" + regexp.QuoteMeta(prefix)}}}}
	}
	cur, err := b.c.Find(ctx, filter, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}).SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, b.fail("listing", prefix, nil, err)
	}
	var ids []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &ids); err != nil {
		return nil, b.fail("listing", prefix, nil, err)
	}
	keys := make([]string, 0, len(ids))
	for _, d := range ids {
		if strings.HasPrefix(d.ID, prefix) {
			keys = append(keys, d.ID)
		}
	}
	slices.Sort(keys) // the server's collation may differ from byte order
	return keys, nil
}

// fail names the store, the operation, the document and the server's answer; kind is
// ErrNotFound, ErrPrecondition or nil.
func (b *Bucket) fail(op, key string, kind, answer error) error {
	where := fmt.Sprintf("%s: %s %q in %s", b.where, op, key, Collection)
	if kind != nil && kind != answer {
		return fmt.Errorf("%s: %w: %w", where, kind, answer)
	}
	return fmt.Errorf("%s: %w", where, answer)
}
