package state

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// Owner is a store that names itself for the nuv.dev/owner mark on the cloud resources of the
// clusters it records (see OwnerOf).
type Owner interface {
	// Owner is a stable id of the store: the same wherever the store is reached from the same way.
	Owner() string
}

// OwnerOf is the id of the store s in the nuv.dev/owner mark: `nuv cluster gc` deletes a cluster
// found by tag without a record only if the mark names its own store. It is short and made of
// [a-z0-9-] (a Google Cloud label value): "dir-" and a hash of a directory store's absolute path
// (so the CI machines of a team, whose stores have the same path, share an owner, and a machine
// that replaces a dead one reaps what the dead one left), "kube-" and a hash of a Kubernetes
// store's API server and namespace; for another store a hash of where it is.
func OwnerOf(s Store) string {
	if o, ok := s.(Owner); ok {
		return o.Owner()
	}
	return "store-" + shortHash(s.Where())
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}

// Owner is "dir-" and a hash of the directory's absolute, cleaned path.
func (d Dir) Owner() string {
	p, err := filepath.Abs(d.Path)
	if err != nil {
		p = filepath.Clean(d.Path)
	}
	return "dir-" + shortHash(p)
}

// Owner is "kube-" and a hash of the API server's address and the namespace (not the kubeconfig's
// path, which differs from machine to machine).
func (k *Kube) Owner() string { return "kube-" + shortHash(k.server+"/"+k.Namespace) }
