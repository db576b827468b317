package machine

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Key is an ed25519 key nuv made: a machine's SSH host key, or nuv's client key that machines
// authorize for root. Its private half is a secret: it goes to files of mode 0600 and into a
// machine's user data, never into a log or an error.
type Key struct {
	priv   ed25519.PrivateKey
	signer ssh.Signer
}

// NewKey makes a new ed25519 key.
func NewKey() (*Key, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make an ed25519 key: %w", err)
	}
	return keyOf(priv)
}

func keyOf(priv ed25519.PrivateKey) (*Key, error) {
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, fmt.Errorf("ed25519 key: %w", err)
	}
	return &Key{priv: priv, signer: s}, nil
}

// ParseKey reads an ed25519 key from its OpenSSH private-key PEM (what PrivatePEM writes).
func ParseKey(pemBytes []byte) (*Key, error) {
	raw, err := ssh.ParseRawPrivateKey(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("parse private key: %w", err)
	}
	switch k := raw.(type) {
	case *ed25519.PrivateKey:
		return keyOf(*k)
	case ed25519.PrivateKey:
		return keyOf(k)
	}
	return nil, fmt.Errorf("parse private key: a %T, not an ed25519 key", raw)
}

// PrivatePEM is the key in OpenSSH's private-key format (`-----BEGIN OPENSSH PRIVATE KEY-----`),
// as sshd reads a HostKey file and ssh an identity file.
func (k *Key) PrivatePEM(comment string) ([]byte, error) {
	b, err := ssh.MarshalPrivateKey(k.priv, comment)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return pem.EncodeToMemory(b), nil
}

// PublicKey is the key's public half.
func (k *Key) PublicKey() ssh.PublicKey { return k.signer.PublicKey() }

// Signer signs with the key (the client key's authentication).
func (k *Key) Signer() ssh.Signer { return k.signer }

// AuthorizedKey is the public half as one authorized_keys (or .pub file) line, with comment if
// it is not empty, without a newline.
func (k *Key) AuthorizedKey(comment string) string { return AuthorizedKey(k.PublicKey(), comment) }

// Fingerprint is the public half's SHA256 fingerprint as ssh-keygen -l prints it.
func (k *Key) Fingerprint() string { return ssh.FingerprintSHA256(k.PublicKey()) }

// AuthorizedKey is pub as one authorized_keys line, with comment if it is not empty, without a
// newline.
func AuthorizedKey(pub ssh.PublicKey, comment string) string {
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	if comment = strings.TrimSpace(comment); comment != "" {
		line += " " + comment
	}
	return line
}

// ParsePublicKey reads a public key from one authorized_keys line (what AuthorizedKey writes; a
// pinned host key is kept in this form).
func ParsePublicKey(line string) (ssh.PublicKey, error) {
	pub, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return nil, fmt.Errorf("parse public key %q: %w", line, err)
	}
	if strings.TrimSpace(string(rest)) != "" {
		return nil, fmt.Errorf("parse public key %q: more than one key", line)
	}
	return pub, nil
}

// WriteKey writes k's private PEM to path (mode 0600, atomically: a reader sees the old file or
// the new one, never a part) and its public line to path.pub (mode 0644).
func WriteKey(path string, k *Key, comment string) error {
	b, err := k.PrivatePEM(comment)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(path, b, 0o600); err != nil {
		return fmt.Errorf("write private key: %w", err)
	}
	if err := fsutil.WriteFileAtomic(path+".pub", []byte(k.AuthorizedKey(comment)+"\n"), 0o644); err != nil {
		return fmt.Errorf("write public key: %w", err)
	}
	return nil
}

// EnvSSHKey, when set, holds nuv's SSH key of a cluster's machines (OpenSSH private-key format)
// in place of the one under nuv's home (KeyFile): Terraform's bootstrap step passes the key
// Terraform made, and a CI job the key it keeps as a secret.
const EnvSSHKey = "NUV_AWS_SSH_KEY"

// ClusterKey reads nuv's SSH key of a cluster's machines: getenv(EnvSSHKey) when set, else
// dir/KeyFile. An error names the variable, never its value.
func ClusterKey(dir string, getenv func(string) string) (*Key, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if v := getenv(EnvSSHKey); v != "" {
		k, err := ParseKey([]byte(v))
		if err != nil {
			return nil, fmt.Errorf("nuv's SSH key from $%s: not an ed25519 private key in OpenSSH's format", EnvSSHKey)
		}
		return k, nil
	}
	return ReadKey(filepath.Join(dir, KeyFile))
}

// ReadKey reads the private key WriteKey wrote to path; a key file others can read is refused.
func ReadKey(path string) (*Key, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read private key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("private key %s has mode %04o: it must be readable by its owner only (chmod 600 %s)", path, st.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read private key: %w", err)
	}
	k, err := ParseKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// HostKeyError is a machine that answered with another host key than the one pinned for it: nuv
// refuses it (a different machine at that address, or someone in between).
type HostKeyError struct {
	// Machine is the machine's name, Address where it was dialled.
	Machine, Address string
	// Want is the pinned key's fingerprint, Got the one the machine presented.
	Want, Got string
}

func (e *HostKeyError) Error() string {
	return fmt.Sprintf("machine %s (%s) presented SSH host key %s, but nuv pinned %s for it: refusing to connect (another machine at that address, or someone in between)",
		e.Machine, e.Address, e.Got, e.Want)
}
