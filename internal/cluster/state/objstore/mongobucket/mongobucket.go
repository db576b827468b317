// Package mongobucket is the objstore.Bucket of a MongoDB database ("mongodb://HOST[:PORT]/DB",
// "mongodb+srv://HOST/DB") on MongoDB's Go driver. The URI is the driver's own (credentials,
// replica set, TLS and the rest in its user info and options).
//
// Every conditional write rests on the one thing every MongoDB-wire server does atomically:
// inserting a document under a unique _id (a second insert of the same _id fails with a duplicate
// key error). Filtered updates are not used for conditions: some servers speaking the protocol
// (FerretDB 1.x) find the documents first and update them by _id afterwards, so several writers
// at one version would all succeed.
//
// Each version of an object is a document of its own in the collection nuv_state:
//
//	{_id: "KEY@SEQ", key: KEY, seq: SEQ, data: BYTES, deleted: BOOL}
//
// SEQ counts the writes of the key from 1 and is written in _id as 20 zero-padded digits, so
// _id order is seq order and no two keys share an _id. The object is the document with the
// highest seq; it is absent if there is none or that one is a tombstone (deleted: true). Its
// version is the seq in decimal. A write reads the latest document and inserts seq+1: a write at
// version V requires the latest to be V (alive), a write if absent requires it to be missing or a
// tombstone, a delete inserts a tombstone. Two writers that read the same latest document insert
// the same _id, and only one insert succeeds; the other is refused (ErrPrecondition).
//
// Documents are never deleted: a freed _id could be inserted again by a writer whose insert was
// delayed, which would then succeed at a version long gone. After a write the versions older than
// the one before are emptied instead (data removed, old: true): a few dozen bytes are kept per
// write, and seq keeps growing across deletes, so a version never repeats for a key.
//
// MongoDB creates a database at its first write, so a mistyped name would silently start an empty
// store: nuv requires the database to exist already (to hold at least one collection, best
// nuv_state: db.createCollection("nuv_state")), as it requires an existing bucket elsewhere.
package mongobucket

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
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

// doc is one version of an object.
type doc struct {
	ID      string `bson:"_id"`
	Key     string `bson:"key"`
	Seq     int64  `bson:"seq"`
	Data    []byte `bson:"data"`
	Deleted bool   `bson:"deleted"`
	Old     bool   `bson:"old,omitempty"` // emptied: a later version superseded it
}

// seqDigits is the width of the seq in an _id (an int64 has at most 19 digits).
const seqDigits = 20

// docID is the _id of a key's version seq.
func docID(key string, seq int64) string {
	return fmt.Sprintf("%s@%0*d", key, seqDigits, seq)
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

// maxTries bounds how often an unconditional write or delete starts over because another
// writer's version came first.
const maxTries = 100

// latest is the key's document with the highest seq, nil if there is none.
func (b *Bucket) latest(ctx context.Context, key string) (*doc, error) {
	filter := bson.D{
		{Key: "_id", Value: bson.D{{Key: "$gte", Value: docID(key, 0)}, {Key: "$lte", Value: docID(key, math.MaxInt64)}}},
		{Key: "key", Value: key}, // the _ids of "KEY@…" keys are in the range too
	}
	for range maxTries {
		var d doc
		err := b.c.FindOne(ctx, filter, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}})).Decode(&d)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if !d.Old {
			return &d, nil
		}
		// Emptied between finding and reading it: two later versions exist, read again.
	}
	return nil, fmt.Errorf("the versions of %q kept changing while read", key)
}

// version is the version a document's seq stands for.
func version(seq int64) string { return strconv.FormatInt(seq, 10) }

// notAt says why a write or delete at version v is refused: the object is absent (last nil or
// a tombstone) or at another version.
func notAt(key, v string, last *doc) error {
	if last == nil || last.Deleted {
		return fmt.Errorf("no document %q at version %s", key, v)
	}
	return fmt.Errorf("document %q is not at version %s (it is at %d)", key, v, last.Seq)
}

// Get returns the data and version of the key's latest document.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, string, error) {
	last, err := b.latest(ctx, key)
	if err != nil {
		return nil, "", b.fail("reading", key, nil, err)
	}
	if last == nil || last.Deleted {
		return nil, "", b.fail("reading", key, objstore.ErrNotFound, mongo.ErrNoDocuments)
	}
	if last.Data == nil {
		last.Data = []byte{}
	}
	return last.Data, version(last.Seq), nil
}

// Put inserts the key's next version if c holds for its latest one: it is missing or a tombstone
// (c.Absent), it is c.Version, or anything (the zero Cond).
func (b *Bucket) Put(ctx context.Context, key string, data []byte, c objstore.Cond) (string, error) {
	if data == nil {
		data = []byte{}
	}
	return b.write(ctx, "writing", key, func(last *doc) (*doc, error) {
		alive := last != nil && !last.Deleted
		switch {
		case c.Absent && alive:
			return nil, b.fail("writing", key, objstore.ErrPrecondition,
				fmt.Errorf("document %q exists (version %d)", key, last.Seq))
		case c.Version != "" && (!alive || version(last.Seq) != c.Version):
			return nil, b.fail("writing", key, objstore.ErrPrecondition, notAt(key, c.Version, last))
		}
		return &doc{Data: data}, nil
	}, c.Absent || c.Version != "")
}

// Delete inserts a tombstone as the key's next version if the latest is alive and at version
// ("" for any).
func (b *Bucket) Delete(ctx context.Context, key, v string) error {
	_, err := b.write(ctx, "deleting", key, func(last *doc) (*doc, error) {
		if last == nil || last.Deleted {
			return nil, b.fail("deleting", key, objstore.ErrNotFound, mongo.ErrNoDocuments)
		}
		if v != "" && version(last.Seq) != v {
			return nil, b.fail("deleting", key, objstore.ErrPrecondition, notAt(key, v, last))
		}
		return &doc{Deleted: true}, nil
	}, v != "")
	return err
}

// write reads the key's latest document, asks next for the document to follow it (or the error
// that refuses the write) and inserts that as seq+1. If another writer inserted seq+1 first, a
// conditional write is refused; an unconditional one starts over on the newer version.
func (b *Bucket) write(ctx context.Context, op, key string, next func(last *doc) (*doc, error), conditional bool) (string, error) {
	for range maxTries {
		last, err := b.latest(ctx, key)
		if err != nil {
			return "", b.fail(op, key, nil, err)
		}
		d, err := next(last)
		if err != nil {
			return "", err
		}
		d.Key, d.Seq = key, 1
		if last != nil {
			d.Seq = last.Seq + 1
		}
		d.ID = docID(key, d.Seq)
		_, err = b.c.InsertOne(ctx, d)
		if mongo.IsDuplicateKeyError(err) {
			if conditional {
				return "", b.fail(op, key, objstore.ErrPrecondition, err)
			}
			continue
		}
		if err != nil {
			return "", b.fail(op, key, nil, err)
		}
		b.empty(ctx, key, d.Seq)
		return version(d.Seq), nil
	}
	return "", b.fail(op, key, nil, fmt.Errorf("other writers came first %d times", maxTries))
}

// empty removes the data of the key's versions before seq-1 (best effort: nothing depends on
// it). They stay as documents, so that their _ids can never be inserted again; seq-1 keeps its
// data for a reader that found it just before seq was written.
func (b *Bucket) empty(ctx context.Context, key string, seq int64) {
	if seq < 3 {
		return
	}
	_, _ = b.c.UpdateMany(ctx, bson.D{
		{Key: "_id", Value: bson.D{{Key: "$gte", Value: docID(key, 0)}, {Key: "$lte", Value: docID(key, seq-2)}}},
		{Key: "key", Value: key},
		{Key: "old", Value: bson.D{{Key: "$ne", Value: true}}},
	}, bson.D{
		{Key: "$set", Value: bson.D{{Key: "old", Value: true}}},
		{Key: "$unset", Value: bson.D{{Key: "data", Value: ""}}},
	})
}

// List returns the keys that start with prefix and whose latest document is not a tombstone,
// sorted.
func (b *Bucket) List(ctx context.Context, prefix string) ([]string, error) {
	filter := bson.D{}
	if prefix != "" {
		// A key's _ids start with the key, so with the prefix.
		filter = bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^" + regexp.QuoteMeta(prefix)}}}}
	}
	cur, err := b.c.Find(ctx, filter, options.Find().SetProjection(bson.D{{Key: "key", Value: 1}, {Key: "seq", Value: 1}, {Key: "deleted", Value: 1}}))
	if err != nil {
		return nil, b.fail("listing", prefix, nil, err)
	}
	var docs []doc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, b.fail("listing", prefix, nil, err)
	}
	last := map[string]doc{}
	for _, d := range docs {
		if d.Key == "" || !strings.HasPrefix(d.Key, prefix) {
			continue
		}
		if l, ok := last[d.Key]; !ok || d.Seq > l.Seq {
			last[d.Key] = d
		}
	}
	keys := make([]string, 0, len(last))
	for k, d := range last {
		if !d.Deleted {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
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
