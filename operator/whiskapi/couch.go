package whiskapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Errors of the CouchDB client.
var (
	errNotFound = errors.New("document not found")
	// errConflict: CouchDB refused a write whose revision is not the document's current one (or a
	// create of a document that exists).
	errConflict = errors.New("document update conflict")
)

// couchClient talks to one database of a CouchDB server over its HTTP API (documents and
// _all_docs); credentials in the URL are sent as basic auth and never printed.
type couchClient struct {
	base *url.URL
	db   string
	hc   *http.Client
}

func newCouchClient(base *url.URL, db string) *couchClient {
	return &couchClient{base: base, db: db, hc: &http.Client{Timeout: 10 * time.Second}}
}

// docURL is the URL of document id (a "/" in the id is escaped, as CouchDB wants it).
func (c *couchClient) url(id string, q url.Values) string {
	u := *c.base
	u.User = nil
	s := u.String() + "/" + url.PathEscape(c.db)
	if id != "" {
		s += "/" + url.PathEscape(id)
	}
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

func (c *couchClient) do(ctx context.Context, method, id string, q url.Values, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(id, q), rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if u := c.base.User; u != nil {
		p, _ := u.Password()
		req.SetBasicAuth(u.Username(), p)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("couchdb %s: %w", c.base.Redacted(), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("couchdb %s: %s %s: %w", c.base.Redacted(), method, id, err)
	}
	return resp.StatusCode, b, nil
}

func couchErr(op, id string, code int, body []byte) error {
	switch code {
	case http.StatusNotFound:
		return errNotFound
	case http.StatusConflict:
		return errConflict
	}
	var e struct{ Error, Reason string }
	_ = json.Unmarshal(body, &e)
	return fmt.Errorf("couchdb %s %s: HTTP %d %s %s", op, id, code, e.Error, e.Reason)
}

// ping checks that the database exists and answers.
func (c *couchClient) ping(ctx context.Context) error {
	code, body, err := c.do(ctx, http.MethodGet, "", nil, nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		if code == http.StatusNotFound {
			return fmt.Errorf("couchdb %s: database %s does not exist", c.base.Redacted(), c.db)
		}
		return couchErr("GET database", c.db, code, body)
	}
	return nil
}

// get reads document id into v and returns its revision.
func (c *couchClient) get(ctx context.Context, id string, v any) (string, error) {
	code, body, err := c.do(ctx, http.MethodGet, id, nil, nil)
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return "", couchErr("GET", id, code, body)
	}
	var meta struct {
		Rev string `json:"_rev"`
	}
	if err := json.Unmarshal(body, &meta); err != nil {
		return "", fmt.Errorf("couchdb GET %s: %w", id, err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return "", fmt.Errorf("couchdb GET %s: %w", id, err)
	}
	return meta.Rev, nil
}

// put writes doc as document id; rev is the revision it replaces ("" creates it). errConflict
// when rev is not current (or the document exists and rev is ""). Returns the new revision.
func (c *couchClient) put(ctx context.Context, id, rev string, doc any) (string, error) {
	var q url.Values
	if rev != "" {
		q = url.Values{"rev": {rev}}
	}
	code, body, err := c.do(ctx, http.MethodPut, id, q, doc)
	if err != nil {
		return "", err
	}
	if code != http.StatusCreated && code != http.StatusAccepted {
		return "", couchErr("PUT", id, code, body)
	}
	var r struct {
		Rev string `json:"rev"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("couchdb PUT %s: %w", id, err)
	}
	return r.Rev, nil
}

// del deletes revision rev of document id (errConflict when it is not current).
func (c *couchClient) del(ctx context.Context, id, rev string) error {
	code, body, err := c.do(ctx, http.MethodDelete, id, url.Values{"rev": {rev}}, nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK && code != http.StatusAccepted {
		return couchErr("DELETE", id, code, body)
	}
	return nil
}

// rangeDocs returns the documents whose ids start with prefix, in id order, skipping skip and
// returning at most limit.
func (c *couchClient) rangeDocs(ctx context.Context, prefix string, skip, limit int) ([]json.RawMessage, error) {
	start, _ := json.Marshal(prefix)
	end, _ := json.Marshal(prefix + "\ufff0")
	q := url.Values{"startkey": {string(start)}, "endkey": {string(end)}, "include_docs": {"true"},
		"skip": {strconv.Itoa(skip)}, "limit": {strconv.Itoa(limit)}}
	code, body, err := c.do(ctx, http.MethodGet, "_all_docs", q, nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, couchErr("GET", "_all_docs", code, body)
	}
	var r struct {
		Rows []struct {
			Doc json.RawMessage `json:"doc"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("couchdb _all_docs: %w", err)
	}
	docs := make([]json.RawMessage, 0, len(r.Rows))
	for _, row := range r.Rows {
		if len(row.Doc) > 0 && string(row.Doc) != "null" {
			docs = append(docs, row.Doc)
		}
	}
	return docs, nil
}
