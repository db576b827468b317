package azure

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// State is everything the emulator keeps, saved whole (atomically, 0600: it holds the client
// secret and the token signing key) to <dir>/state.json after every change.
type State struct {
	// TenantID, ClientID and ClientSecret are the only service principal the authority accepts.
	TenantID     string `json:"tenantId"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	// SubscriptionID is the only subscription ARM serves.
	SubscriptionID string `json:"subscriptionId"`
	// SigningKey signs the access tokens the authority issues (hex).
	SigningKey string `json:"signingKey"`
	// Addr is where the emulator last listened.
	Addr string `json:"addr,omitempty"`

	// Groups are the resource groups by lower-case name.
	Groups map[string]*group `json:"groups"`
	// Clusters are the managed clusters by lower-case "group/name" (aks_state.go).
	Clusters map[string]*managedCluster `json:"clusters"`
	// Operations are the long-running operations by id (finished ones are kept an hour).
	Operations map[string]*operation `json:"operations"`
}

// group is a resource group.
type group struct {
	Name      string            `json:"name"`
	Location  string            `json:"location"`
	Tags      map[string]string `json:"tags,omitempty"`
	ManagedBy string            `json:"managedBy,omitempty"`
	// State is Succeeded or Deleting.
	State string    `json:"state"`
	Due   time.Time `json:"due,omitempty"`
	Op    string    `json:"op,omitempty"`
}

// operation is one long-running operation (ARM's Azure-AsyncOperation status resource).
type operation struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"` // the operation id of the API (ManagedClusters_CreateOrUpdate)
	Resource string    `json:"resource"`
	Location string    `json:"location"`
	Status   string    `json:"status"` // InProgress, Succeeded, Failed, Canceled
	Start    time.Time `json:"startTime"`
	End      time.Time `json:"endTime,omitempty"`
	Error    *armError `json:"error,omitempty"`
	// FailWith, when set, is the error the operation ends with (an injected mid-operation failure).
	FailWith *armError `json:"failWith,omitempty"`
}

const stateFileName = emucore.StateFile

// stateSpec keeps the State in <dir>/state.json.
var stateSpec = emucore.StateSpec[State]{What: "azure emulator", Check: func(path string, s *State) error {
	if s.TenantID == "" || s.ClientID == "" || s.ClientSecret == "" || s.SubscriptionID == "" || s.SigningKey == "" {
		return fmt.Errorf("azure emulator state %s is incomplete (no tenant, client, subscription or signing key)", path)
	}
	if s.Groups == nil {
		s.Groups = map[string]*group{}
	}
	if s.Clusters == nil {
		s.Clusters = map[string]*managedCluster{}
	}
	if s.Operations == nil {
		s.Operations = map[string]*operation{}
	}
	return nil
}}

func newState() *State {
	return &State{
		TenantID:       newUUID(),
		ClientID:       newUUID(),
		ClientSecret:   randString(40),
		SubscriptionID: newUUID(),
		SigningKey:     hex.EncodeToString(randBytes(32)),
		Groups:         map[string]*group{},
		Clusters:       map[string]*managedCluster{},
		Operations:     map[string]*operation{},
	}
}

// loadState reads dir/state.json; os.ErrNotExist when there is none.
func loadState(dir string) (*State, error) { return stateSpec.Load(dir) }

func clusterKey(rg, name string) string { return strings.ToLower(rg) + "/" + strings.ToLower(name) }

func randBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return b
}

func randString(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789~_.-"
	b := randBytes(n)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// newUUID is a random RFC 4122 version 4 UUID.
func newUUID() string {
	b := randBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
