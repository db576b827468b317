package aws

import (
	"crypto/ed25519"
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// EC2 key pairs. As EC2 does, the emulator keeps only a key pair's public key and fingerprint:
// CreateKeyPair answers the private key once and forgets it. Instances launched with a key pair
// get its public key in root's authorized_keys, as cloud-init installs it.

type ec2KeyPair struct {
	KeyPairID   string    `json:"keyPairId"`
	KeyName     string    `json:"keyName"`
	KeyType     string    `json:"keyType"` // rsa or ed25519
	Fingerprint string    `json:"fingerprint"`
	PublicKey   string    `json:"publicKey"` // OpenSSH authorized_keys form
	CreateTime  time.Time `json:"createTime"`
	Tags        []ec2Tag  `json:"tags"`
}

type xmlKeyPair struct {
	KeyPairID   string    `xml:"keyPairId"`
	KeyName     string    `xml:"keyName"`
	KeyType     string    `xml:"keyType"`
	Fingerprint string    `xml:"keyFingerprint"`
	PublicKey   string    `xml:"publicKey,omitempty"`
	CreateTime  time.Time `xml:"createTime"`
	Tags        []ec2Tag  `xml:"tagSet>item"`
}

func (s *Server) keyPairs() map[string]*ec2KeyPair {
	e := s.ec2()
	if e.KeyPairs == nil {
		e.KeyPairs = map[string]*ec2KeyPair{}
	}
	return e.KeyPairs
}

func keyPairNotFound(name string) error {
	return errf(400, "InvalidKeyPair.NotFound", "The key pair '%s' does not exist", name)
}

// keyPairByID finds a key pair by its key-0... id.
func (s *Server) keyPairByID(id string) *ec2KeyPair {
	for _, k := range s.keyPairs() {
		if k.KeyPairID == id {
			return k
		}
	}
	return nil
}

// newKeyPairName checks a new key pair's name: present, at most 255 ASCII characters, unused.
func (s *Server) newKeyPairName(p params) (string, error) {
	name, err := p.required("KeyName")
	if err != nil {
		return "", err
	}
	if len(name) > 255 {
		return "", errf(400, "InvalidParameterValue", "Value (%s) for parameter keyName is invalid. Length exceeds maximum of 255.", name)
	}
	for _, r := range name {
		if r > 127 {
			return "", errf(400, "InvalidParameterValue", "Value (%s) for parameter keyName is invalid. Character sets beyond ASCII are not supported.", name)
		}
	}
	if s.keyPairs()[name] != nil {
		return "", errf(400, "InvalidKeyPair.Duplicate", "The keypair '%s' already exists.", name)
	}
	return name, nil
}

func (s *Server) ec2CreateKeyPair(p params) (any, error) {
	name, err := s.newKeyPairName(p)
	if err != nil {
		return nil, err
	}
	typ := p.get("KeyType")
	if typ == "" {
		typ = "rsa"
	}
	if f := p.get("KeyFormat"); f != "" && f != "pem" {
		return nil, errf(400, "InvalidParameterValue", "Value (%s) for parameter keyFormat is invalid (nuv emulator makes pem keys only)", f)
	}
	tags, err := tagsFor(p, "key-pair")
	if err != nil {
		return nil, err
	}
	var material, fingerprint string
	var pub ssh.PublicKey
	switch typ {
	case "rsa":
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, fmt.Errorf("generate an RSA key: %w", err)
		}
		material = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
		// EC2's fingerprint of a key it made: SHA-1 of the PKCS#8 form of the private key.
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, fmt.Errorf("encode the RSA key: %w", err)
		}
		sum := sha1.Sum(der)
		fingerprint = colonHex(sum[:])
		if pub, err = ssh.NewPublicKey(&key.PublicKey); err != nil {
			return nil, fmt.Errorf("encode the RSA public key: %w", err)
		}
	case "ed25519":
		pk, sk, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generate an ED25519 key: %w", err)
		}
		block, err := ssh.MarshalPrivateKey(sk, "")
		if err != nil {
			return nil, fmt.Errorf("encode the ED25519 key: %w", err)
		}
		material = string(pem.EncodeToMemory(block))
		if pub, err = ssh.NewPublicKey(pk); err != nil {
			return nil, fmt.Errorf("encode the ED25519 public key: %w", err)
		}
		fingerprint = sha256Fingerprint(pub)
	default:
		return nil, errf(400, "InvalidParameterValue", "Value (%s) for parameter keyType is invalid. Valid values are rsa and ed25519.", typ)
	}
	k := &ec2KeyPair{KeyPairID: awsID("key"), KeyName: name, KeyType: typ, Fingerprint: fingerprint,
		PublicKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + " " + name, CreateTime: time.Now().UTC().Truncate(time.Second), Tags: tags}
	s.keyPairs()[name] = k
	return &struct {
		ec2Meta
		KeyName     string   `xml:"keyName"`
		Fingerprint string   `xml:"keyFingerprint"`
		Material    string   `xml:"keyMaterial"`
		KeyPairID   string   `xml:"keyPairId"`
		Tags        []ec2Tag `xml:"tagSet>item"`
	}{KeyName: name, Fingerprint: fingerprint, Material: strings.TrimSpace(material), KeyPairID: k.KeyPairID, Tags: tags}, nil
}

func (s *Server) ec2ImportKeyPair(p params) (any, error) {
	name, err := s.newKeyPairName(p)
	if err != nil {
		return nil, err
	}
	enc, err := p.required("PublicKeyMaterial")
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, errf(400, "InvalidParameterValue", "Value for parameter publicKeyMaterial is invalid: it is not base64")
	}
	pub, comment, _, _, err := ssh.ParseAuthorizedKey(raw)
	if err != nil {
		return nil, errf(400, "InvalidKey.Format", "Key is not in valid OpenSSH public key format")
	}
	tags, err := tagsFor(p, "key-pair")
	if err != nil {
		return nil, err
	}
	var typ, fingerprint string
	switch pub.Type() {
	case ssh.KeyAlgoRSA:
		ck, ok := pub.(ssh.CryptoPublicKey)
		if !ok {
			return nil, errf(400, "InvalidKey.Format", "Key is not in valid OpenSSH public key format")
		}
		rk, ok := ck.CryptoPublicKey().(*rsa.PublicKey)
		if !ok || (rk.N.BitLen() != 1024 && rk.N.BitLen() != 2048 && rk.N.BitLen() != 4096) {
			return nil, errf(400, "InvalidKey.Format", "Key is not in valid OpenSSH public key format (RSA keys of 1024, 2048 or 4096 bits)")
		}
		der, err := x509.MarshalPKIXPublicKey(rk)
		if err != nil {
			return nil, errf(400, "InvalidKey.Format", "Key is not in valid OpenSSH public key format")
		}
		// EC2's fingerprint of an imported RSA key: MD5 of its DER public key.
		sum := md5.Sum(der)
		typ, fingerprint = "rsa", colonHex(sum[:])
	case ssh.KeyAlgoED25519:
		typ, fingerprint = "ed25519", sha256Fingerprint(pub)
	default:
		return nil, errf(400, "InvalidKey.Format", "Key is not in valid OpenSSH public key format (EC2 takes rsa and ed25519 keys, not %s)", pub.Type())
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	if comment != "" {
		line += " " + comment
	}
	k := &ec2KeyPair{KeyPairID: awsID("key"), KeyName: name, KeyType: typ, Fingerprint: fingerprint, PublicKey: line,
		CreateTime: time.Now().UTC().Truncate(time.Second), Tags: tags}
	s.keyPairs()[name] = k
	return &struct {
		ec2Meta
		KeyName     string   `xml:"keyName"`
		Fingerprint string   `xml:"keyFingerprint"`
		KeyPairID   string   `xml:"keyPairId"`
		Tags        []ec2Tag `xml:"tagSet>item"`
	}{KeyName: name, Fingerprint: fingerprint, KeyPairID: k.KeyPairID, Tags: tags}, nil
}

func (s *Server) ec2DescribeKeyPairs(p params) (any, error) {
	byID := map[string]*ec2KeyPair{}
	for _, k := range s.keyPairs() {
		byID[k.KeyPairID] = k
	}
	names := p.list("KeyName")
	for _, n := range names {
		if s.keyPairs()[n] == nil {
			return nil, keyPairNotFound(n)
		}
	}
	keys, err := selectEC2(byID, p.list("KeyPairId"), func(id string) error {
		return errf(400, "InvalidKeyPair.NotFound", "The key pair ID '%s' does not exist", id)
	}, p.filters(),
		func(k *ec2KeyPair) bool { return len(names) == 0 || contains(names, k.KeyName) },
		func(k *ec2KeyPair) []ec2Tag { return k.Tags },
		func(k *ec2KeyPair) map[string][]string {
			return map[string][]string{"key-pair-id": {k.KeyPairID}, "key-name": {k.KeyName}, "fingerprint": {k.Fingerprint}, "key-type": {k.KeyType}}
		})
	if err != nil {
		return nil, err
	}
	withPublic := p.boolean("IncludePublicKey", false)
	out := &struct {
		ec2Meta
		Keys []xmlKeyPair `xml:"keySet>item"`
	}{}
	for _, k := range keys {
		x := xmlKeyPair{KeyPairID: k.KeyPairID, KeyName: k.KeyName, KeyType: k.KeyType, Fingerprint: k.Fingerprint, CreateTime: k.CreateTime, Tags: k.Tags}
		if withPublic {
			x.PublicKey = k.PublicKey
		}
		out.Keys = append(out.Keys, x)
	}
	return out, nil
}

// ec2DeleteKeyPair deletes a key pair by name or id. As on EC2, deleting a name that does not
// exist succeeds; an id that does not exist is InvalidKeyPair.NotFound. Instances launched with
// the key keep it.
func (s *Server) ec2DeleteKeyPair(p params) (any, error) {
	var k *ec2KeyPair
	switch name, id := p.get("KeyName"), p.get("KeyPairId"); {
	case id != "":
		if k = s.keyPairByID(id); k == nil {
			return nil, errf(400, "InvalidKeyPair.NotFound", "The key pair ID '%s' does not exist", id)
		}
	case name != "":
		k = s.keyPairs()[name]
	default:
		return nil, errf(400, "MissingParameter", "The request must contain the parameter KeyName or KeyPairId")
	}
	out := &struct {
		ec2Meta
		Return    bool   `xml:"return"`
		KeyPairID string `xml:"keyPairId,omitempty"`
	}{Return: true}
	if k != nil {
		delete(s.keyPairs(), k.KeyName)
		out.KeyPairID = k.KeyPairID
	}
	return out, nil
}

func colonHex(b []byte) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = fmt.Sprintf("%02x", c)
	}
	return strings.Join(parts, ":")
}

// sha256Fingerprint is OpenSSH's fingerprint of a key (base64 SHA-256 of its wire form), which EC2
// reports for ED25519 keys.
func sha256Fingerprint(pub ssh.PublicKey) string {
	sum := sha256.Sum256(pub.Marshal())
	return base64.StdEncoding.EncodeToString(sum[:])
}
