package kit

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// nuv's marks besides TagCluster (spec.Marks), as tags where keys allow '.' and '/' (AWS, Azure):
// TagExpiresAt holds the expiry in RFC 3339 UTC ("2026-12-02T10:00:00Z"), TagOwner the id of the
// state store that made the cluster (state.OwnerOf).
const (
	TagExpiresAt = "nuv.dev/expires-at"
	TagOwner     = "nuv.dev/owner"
)

// The same marks as Google Cloud labels, whose keys and values allow only lower-case letters,
// digits, '-' and '_': LabelExpiresAt holds the expiry in Unix seconds ("1796205600").
const (
	LabelExpiresAt = "nuv-expires-at"
	LabelOwner     = "nuv-owner"
)

// ClusterTags are the tags of every cloud resource nuv makes for cluster c: its user tags, nuv's
// mark TagCluster=<name> and its marks (MarkTags), a copy.
func ClusterTags(c *spec.Cluster) map[string]string {
	t := Tags(c.Spec.Tags, TagCluster, c.Metadata.Name)
	maps.Copy(t, MarkTags(c.Marks))
	return t
}

// MarkTags are m as tags: TagExpiresAt when the cluster expires, TagOwner when an owner is known.
func MarkTags(m spec.Marks) map[string]string {
	t := map[string]string{}
	if m.ExpiresAt != nil {
		t[TagExpiresAt] = m.ExpiresAt.UTC().Format(time.RFC3339)
	}
	if m.Owner != "" {
		t[TagOwner] = m.Owner
	}
	return t
}

// MarkLabels are m as Google Cloud labels (LabelExpiresAt in Unix seconds, LabelOwner).
func MarkLabels(m spec.Marks) map[string]string {
	return MarkLabelsKeyed(m, LabelExpiresAt, LabelOwner)
}

// MarkLabelsKeyed are m as labels under the keys a platform allows (the expiry in Unix seconds
// under expiresKey, the owner under ownerKey; none for what m lacks): Google Cloud's keys take no
// dots, Kubernetes node labels take nuv.dev/ prefixes.
func MarkLabelsKeyed(m spec.Marks, expiresKey, ownerKey string) map[string]string {
	l := map[string]string{}
	if m.ExpiresAt != nil {
		l[expiresKey] = strconv.FormatInt(m.ExpiresAt.Unix(), 10)
	}
	if m.Owner != "" {
		l[ownerKey] = m.Owner
	}
	return l
}

// Unmarked is tags without nuv's own keys (TagCluster, LabelCluster and the marks), a copy: the
// tags plans compare with the spec's, so an expiry moved by `nuv cluster extend` is no change.
func Unmarked(tags map[string]string) map[string]string {
	t := maps.Clone(tags)
	for _, k := range []string{TagCluster, LabelCluster, TagExpiresAt, TagOwner, LabelExpiresAt, LabelOwner} {
		delete(t, k)
	}
	return t
}

// WithoutMarks is tags without the marks (TagExpiresAt, TagOwner and their label spellings), a
// copy: for a provider whose compared tags include its TagCluster.
func WithoutMarks(tags map[string]string) map[string]string {
	t := maps.Clone(tags)
	for _, k := range []string{TagExpiresAt, TagOwner, LabelExpiresAt, LabelOwner} {
		delete(t, k)
	}
	return t
}

// MarksOf reads nuv's marks from a resource's tags, or labels (either spelling); an expiry that
// cannot be read is an error naming the tag and its value.
func MarksOf(tags map[string]string) (spec.Marks, error) {
	var m spec.Marks
	m.Owner = tags[TagOwner]
	if m.Owner == "" {
		m.Owner = tags[LabelOwner]
	}
	if v, ok := tags[TagExpiresAt]; ok {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return m, fmt.Errorf("tag %s=%q is not an RFC 3339 time", TagExpiresAt, v)
		}
		m.ExpiresAt = &t
	} else if v, ok := tags[LabelExpiresAt]; ok {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return m, fmt.Errorf("label %s=%q is not a time in Unix seconds", LabelExpiresAt, v)
		}
		t := time.Unix(s, 0).UTC()
		m.ExpiresAt = &t
	}
	return m, nil
}
