package whiskapi

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Environment variables ConfigFromEnv reads.
const (
	EnvAuth              = "WHISK_AUTH"                // "<uuid>:<key>", the namespace's key (required)
	EnvNamespace         = "WHISK_NAMESPACE"           // the key's namespace (default guest)
	EnvCouchDBURL        = "WHISK_COUCHDB_URL"         // e.g. http://whisk-couchdb:5984; empty: no CouchDB
	EnvDatabase          = "WHISK_DB"                  // default whisks
	EnvCouchDBUser       = "WHISK_COUCHDB_USER"        // CouchDB's user (basic auth); or in the URL
	EnvCouchDBPassword   = "WHISK_COUCHDB_PASSWORD"    // its password
	EnvRedisAddr         = "WHISK_REDIS_ADDR"          // host:port; empty: no Redis, no throttling
	EnvRedisPassword     = "WHISK_REDIS_PASSWORD"      // Redis's password (AUTH); empty: none
	EnvRequestsPerMinute = "WHISK_REQUESTS_PER_MINUTE" // per namespace (default 600)
	EnvPort              = "PORT"                      // default 8080
)

// Defaults.
const (
	DefaultNamespace         = "guest"
	DefaultDatabase          = "whisks"
	DefaultRequestsPerMinute = 600
	DefaultPort              = 8080
)

// Config configures a Server.
type Config struct {
	// Namespace is the namespace the key belongs to.
	Namespace string
	// AuthUser and AuthKey are the two halves of the key "<uuid>:<key>".
	AuthUser, AuthKey string
	// CouchDBURL is the CouchDB (or CouchDB-compatible) server; nil: not configured.
	CouchDBURL *url.URL
	// Database holds the entities.
	Database string
	// RedisAddr is host:port of Redis; empty: not configured.
	RedisAddr string
	// RedisPassword is sent with AUTH on each connection; empty: none.
	RedisPassword string
	// RequestsPerMinute is each namespace's limit.
	RequestsPerMinute int
	// Port is the port the server listens on.
	Port int
}

// String describes the configuration without its secrets (the key, CouchDB's password).
func (c Config) String() string {
	couch := "not configured"
	if c.CouchDBURL != nil {
		couch = c.CouchDBURL.Redacted() + "/" + c.Database
	}
	redis := "not configured (no throttling)"
	if c.RedisAddr != "" {
		redis = fmt.Sprintf("%s (%d requests per minute per namespace)", c.RedisAddr, c.RequestsPerMinute)
	}
	return fmt.Sprintf("namespace %s, port %d, couchdb %s, redis %s", c.Namespace, c.Port, couch, redis)
}

var (
	// nameRE is OpenWhisk's rule for entity and namespace names: word characters, and inside also
	// @, space, dot and dash; at most 256 characters.
	nameRE = regexp.MustCompile(`\A([\w]|[\w][\w@ .-]*[\w@.-]+)\z`)
	uuidRE = regexp.MustCompile(`\A[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\z`)
)

func validName(s string) bool { return len(s) <= 256 && nameRE.MatchString(s) }

// ConfigFromEnv reads the configuration; errors name the variable (never its secret value).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{Namespace: getenv(EnvNamespace), Database: getenv(EnvDatabase), RedisAddr: getenv(EnvRedisAddr),
		RequestsPerMinute: DefaultRequestsPerMinute, Port: DefaultPort}
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if !validName(c.Namespace) || c.Namespace == "_" {
		return c, fmt.Errorf("%s=%q is not a namespace name (word characters, @, dot, dash, space inside)", EnvNamespace, c.Namespace)
	}
	auth := getenv(EnvAuth)
	user, key, ok := strings.Cut(auth, ":")
	switch {
	case auth == "":
		return c, fmt.Errorf("%s is not set: the namespace's key, \"<uuid>:<key>\"", EnvAuth)
	case !ok || !uuidRE.MatchString(user) || len(key) < 16:
		return c, fmt.Errorf("%s is not a key of the form \"<uuid>:<key>\" (a UUID, a colon, at least 16 characters)", EnvAuth)
	}
	c.AuthUser, c.AuthKey = user, key
	if c.Database == "" {
		c.Database = DefaultDatabase
	}
	if s := getenv(EnvCouchDBURL); s != "" {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			red := s
			if err == nil {
				red = u.Redacted()
			}
			return c, fmt.Errorf("%s=%q is not an http(s) URL", EnvCouchDBURL, red)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		if user, pass := getenv(EnvCouchDBUser), getenv(EnvCouchDBPassword); user != "" || pass != "" {
			if user == "" || pass == "" {
				return c, fmt.Errorf("%s and %s go together: set both or neither", EnvCouchDBUser, EnvCouchDBPassword)
			}
			u.User = url.UserPassword(user, pass)
		}
		c.CouchDBURL = u
	}
	c.RedisPassword = getenv(EnvRedisPassword)
	if c.RedisAddr != "" {
		if _, _, err := net.SplitHostPort(c.RedisAddr); err != nil {
			return c, fmt.Errorf("%s=%q is not host:port: %w", EnvRedisAddr, c.RedisAddr, err)
		}
	}
	if s := getenv(EnvRequestsPerMinute); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("%s=%q is not a positive number", EnvRequestsPerMinute, s)
		}
		c.RequestsPerMinute = n
	}
	if s := getenv(EnvPort); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 65535 {
			return c, fmt.Errorf("%s=%q is not a port number", EnvPort, s)
		}
		c.Port = n
	}
	return c, nil
}
