package aws

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// State is everything the emulator keeps. It is saved whole, atomically and 0600 (it holds the
// secret key), to <dir>/state.json after every change, so a restarted emulator finds its resources,
// its credentials and its account again.
type State struct {
	// Account is the 12-digit account the credentials belong to.
	Account string `json:"account"`
	// AccessKeyID and SecretAccessKey are the only credentials the emulator accepts.
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
	// UserID is the IAM user id of the caller (AIDA...), user "nuv".
	UserID string `json:"userId"`
	// Region is the region EKS and EC2 resources live in.
	Region string `json:"region"`
	// Addr is the address the emulator last listened on; a restart takes it again, since the
	// control planes of EKS clusters call its token webhook there.
	Addr string `json:"addr,omitempty"`

	EKS eksState `json:"eks"`
	EC2 ec2State `json:"ec2"`
	IAM iamState `json:"iam"`
	// ELBV2 is Elastic Load Balancing (v2): load balancers, target groups, listeners.
	ELBV2 elbState `json:"elbv2"`
}

// callerARN is the ARN GetCallerIdentity reports for the emulator's credentials.
func (s *State) callerARN() string { return "arn:aws:iam::" + s.Account + ":user/nuv" }

// newState makes the state of a fresh emulator: new credentials and account, no resources.
func newState(region string) *State {
	return &State{
		Account:         randDigits(12),
		AccessKeyID:     "AKIA" + randUpper(16),
		SecretAccessKey: randToken(40),
		UserID:          "AIDA" + randUpper(17),
		Region:          region,
	}
}

const stateFileName = emucore.StateFile

// stateSpec keeps the State in <dir>/state.json.
var stateSpec = emucore.StateSpec[State]{What: "emulator", Check: func(path string, s *State) error {
	if s.AccessKeyID == "" || s.SecretAccessKey == "" || s.Account == "" || s.Region == "" {
		return fmt.Errorf("emulator state %s is incomplete (no credentials, account or region)", path)
	}
	return nil
}}

// loadState reads dir/state.json; os.ErrNotExist when there is none.
func loadState(dir string) (*State, error) { return stateSpec.Load(dir) }

// epoch is a time that restJson1 sends as seconds since the epoch (a JSON number).
type epoch struct{ time.Time }

func (e epoch) MarshalJSON() ([]byte, error) {
	if e.IsZero() {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(e.UnixMilli())/1000, 'f', 3, 64)), nil
}

func (e *epoch) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		e.Time = time.Time{}
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("epoch time %s: %w", b, err)
	}
	e.Time = time.UnixMilli(int64(f * 1000)).UTC()
	return nil
}

// now is the time as the state keeps it (UTC, to the millisecond, as restJson1 sends it).
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

const hexDigits = "0123456789abcdef"

func randFrom(alphabet string, n int) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(fmt.Sprintf("crypto/rand failed: %v", err))
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}

func randDigits(n int) string { return randFrom("123456789", 1) + randFrom("0123456789", n-1) }
func randUpper(n int) string  { return randFrom("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", n) }
func randToken(n int) string {
	return randFrom("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", n)
}

// awsID is an EC2-style id: prefix-<17 hex digits>, like vpc-0123456789abcdef0.
func awsID(prefix string) string { return prefix + "-0" + randFrom(hexDigits, 16) }

// stableHex is n hex digits derived from seed (ids that must not change between calls).
func stableHex(seed string, n int) string { return hexSHA256([]byte(seed))[:n] }

// uuid is a random RFC 4122 version 4 UUID (request ids, update ids).
func uuid() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
