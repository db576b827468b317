package gcp

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// State is everything the emulator keeps. It is saved whole, atomically and 0600 (it holds the
// service account's private key and the token secret), to <dir>/state.json after every change,
// so a restarted emulator finds its clusters, operations and credentials again.
type State struct {
	// Project is the one project the emulator serves; ProjectNumber its number.
	Project       string `json:"project"`
	ProjectNumber string `json:"projectNumber"`
	// ServiceAccount is the email of the service account the emulator issued a key for (the
	// project's owner); KeyID and PrivateKey are that key (PEM, PKCS#8).
	ServiceAccount string `json:"serviceAccount"`
	KeyID          string `json:"keyId"`
	PrivateKey     string `json:"privateKey"`
	// TokenSecret signs the access tokens the token endpoint issues (base64).
	TokenSecret string `json:"tokenSecret"`
	// Addr is the address the emulator last listened on.
	Addr string `json:"addr,omitempty"`

	// Clusters by location/name.
	Clusters map[string]*clusterRec `json:"clusters"`
	// Operations by name (finished ones are kept, as GKE lists them).
	Operations map[string]*opRec `json:"operations"`
}

// clusterRec is one cluster: its state (gke_state.go) and what the emulator tracks about it.
type clusterRec struct {
	C *gkeCluster
	// Op is the operation running on the cluster ("" when none): GKE runs one at a time.
	Op string
	// Webhook is the token webhook URL its control plane was created with.
	Webhook string
	// Backend is set once its control plane exists.
	Backend bool
}

// clusterJSON is a clusterRec in state.json. A state file written before the emulator kept its
// own types holds the cluster in the API's form, under "cluster".
type clusterJSON struct {
	State   *gkeCluster     `json:"state,omitempty"`
	Legacy  json.RawMessage `json:"cluster,omitempty"`
	Op      string          `json:"op,omitempty"`
	Webhook string          `json:"webhook,omitempty"`
	Backend bool            `json:"backend,omitempty"`
}

func (c *clusterRec) MarshalJSON() ([]byte, error) {
	return json.Marshal(clusterJSON{State: c.C, Op: c.Op, Webhook: c.Webhook, Backend: c.Backend})
}

func (c *clusterRec) UnmarshalJSON(b []byte) error {
	var j clusterJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	st, err := legacyCluster(j.State, j.Legacy)
	if err != nil {
		return err
	}
	if st == nil {
		return errors.New("a cluster without its state")
	}
	c.C, c.Op, c.Webhook, c.Backend = st, j.Op, j.Webhook, j.Backend
	return nil
}

// legacyCluster is st, or else the cluster in the API's form (wire) as the state keeps it; nil
// when there is neither.
func legacyCluster(st *gkeCluster, wire json.RawMessage) (*gkeCluster, error) {
	if st != nil || len(wire) == 0 {
		return st, nil
	}
	w := &containerpb.Cluster{}
	if err := protojson.Unmarshal(wire, w); err != nil {
		return nil, err
	}
	return clusterState(w), nil
}

// opRec is one operation and how it progresses.
type opRec struct {
	// Op is the operation as GKE shows it (gke_state.go).
	Op *gkeOperation
	// Cluster is the key (location/name) of the cluster it works on; Pool the node pool, if any.
	Cluster string
	Pool    string
	// Due is when it may finish (its start plus the emulator's delay).
	Due time.Time
	// Fail, if set, makes it fail halfway with this message and FailCode (an injected fault).
	Fail     string
	FailCode int32
	// WorkDone is set once the control plane and nodes are as the operation wants.
	WorkDone bool
	// Before is the cluster as it was before an update, restored if the operation fails.
	Before *gkeCluster
}

// opJSON is an opRec in state.json; an older state file holds Before in the API's form, under
// "before".
type opJSON struct {
	Op           *gkeOperation   `json:"operation"`
	Cluster      string          `json:"cluster"`
	Pool         string          `json:"pool,omitempty"`
	Due          time.Time       `json:"due"`
	Fail         string          `json:"fail,omitempty"`
	FailCode     int32           `json:"failCode,omitempty"`
	WorkDone     bool            `json:"workDone,omitempty"`
	Before       *gkeCluster     `json:"beforeState,omitempty"`
	LegacyBefore json.RawMessage `json:"before,omitempty"`
}

func (o *opRec) MarshalJSON() ([]byte, error) {
	return json.Marshal(opJSON{Op: o.Op, Cluster: o.Cluster, Pool: o.Pool, Due: o.Due, Fail: o.Fail, FailCode: o.FailCode, WorkDone: o.WorkDone, Before: o.Before})
}

func (o *opRec) UnmarshalJSON(b []byte) error {
	var j opJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.Op == nil {
		return errors.New("an operation without its state")
	}
	before, err := legacyCluster(j.Before, j.LegacyBefore)
	if err != nil {
		return err
	}
	o.Op, o.Before = j.Op, before
	o.Cluster, o.Pool, o.Due, o.Fail, o.FailCode, o.WorkDone = j.Cluster, j.Pool, j.Due, j.Fail, j.FailCode, j.WorkDone
	return nil
}

const stateFileName = emucore.StateFile

// DefaultProject is the project of a new emulator unless Options say otherwise.
const DefaultProject = "nuv-emulator"

// newState makes the state of a fresh emulator: a service account key and a token secret.
func newState(project string) (*State, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("service account key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	return &State{
		Project:        project,
		ProjectNumber:  randDigits(12),
		ServiceAccount: "nuv-owner@" + project + ".iam.gserviceaccount.com",
		KeyID:          randHex(40),
		PrivateKey:     string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		TokenSecret:    base64.StdEncoding.EncodeToString(secret),
		Clusters:       map[string]*clusterRec{},
		Operations:     map[string]*opRec{},
	}, nil
}

// stateSpec keeps the State in <dir>/state.json.
var stateSpec = emucore.StateSpec[State]{What: "GKE emulator", Check: func(path string, s *State) error {
	if s.Project == "" || s.PrivateKey == "" || s.TokenSecret == "" || s.ServiceAccount == "" {
		return fmt.Errorf("GKE emulator state %s is incomplete (no project, service account key or token secret)", path)
	}
	if s.Clusters == nil {
		s.Clusters = map[string]*clusterRec{}
	}
	if s.Operations == nil {
		s.Operations = map[string]*opRec{}
	}
	return nil
}}

// loadState reads dir/state.json; os.ErrNotExist when there is none.
func loadState(dir string) (*State, error) { return stateSpec.Load(dir) }

func (s *State) privateKey() (*rsa.PrivateKey, error) {
	blk, _ := pem.Decode([]byte(s.PrivateKey))
	if blk == nil {
		return nil, errors.New("GKE emulator state: the service account key is not PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("GKE emulator state: service account key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("GKE emulator state: the service account key is not RSA")
	}
	return rk, nil
}

func randHex(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

func randDigits(n int) string {
	out := make([]byte, n)
	for i := range out {
		k, _ := rand.Int(rand.Reader, big.NewInt(10))
		out[i] = byte('0' + k.Int64())
	}
	if out[0] == '0' {
		out[0] = '1'
	}
	return string(out)
}
