package proc

import (
	"strings"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// What a detached process (the emulators, the registry, a local cluster's components, an operator
// run on the host) inherits from the nuv that starts it. It outlives that nuv, so it must make the
// same choices the user made for it — which container runtime and daemon, which proxy, which nuv
// program and caches — yet it must not carry the credentials of the shell it was started from: the
// AWS, Azure and Google keys, tokens and passwords of the project's .env stay with nuv.
//
// The rule is an allow-list followed by a deny-list:
//   - kept: the system basics (PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TZ, TMPDIR, TERM),
//     the XDG base directories (XDG_*), nuv's own settings (NUV_*), Go's (GO*, CGO_ENABLED; not
//     GOOGLE_*), what selects the container runtime and its daemon (DOCKER_HOST, DOCKER_CONTEXT,
//     DOCKER_CONFIG, DOCKER_CERT_PATH, DOCKER_TLS_VERIFY, DOCKER_API_VERSION, CONTAINER_HOST,
//     CONTAINER_CONNECTION, CONTAINERS_CONF, CONTAINERS_REGISTRIES_CONF, CONTAINERS_STORAGE_CONF,
//     REGISTRY_AUTH_FILE's path, KIND_EXPERIMENTAL_PROVIDER) and the proxies (HTTP_PROXY,
//     HTTPS_PROXY, NO_PROXY, ALL_PROXY, in either case);
//   - then dropped, whatever the list said: a name that speaks of a credential (…TOKEN…,
//     …PASSWORD…, …PASSWD…, …SECRET…, …CREDENTIAL…, …API_KEY…, …ACCESS_KEY…, …PRIVATE_KEY…,
//     …AUTH_CONFIG…), and a value holding a URL with a password (https://user:pass@proxy), so a
//     proxy or GOPROXY that authenticates stays with nuv.
// Everything else (AWS_*, AZURE_*, GOOGLE_*, KUBECONFIG, the project's variables) is dropped.

// daemonKey says whether k is one of the single names kept (besides the prefixes of keepPrefix).
// A switch, not a map: building a map would be work at every start of every nuv program.
func daemonKey(k string) bool {
	switch k {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TZ", "TMPDIR", "TERM", "CGO_ENABLED",
		"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "DOCKER_API_VERSION",
		"CONTAINER_HOST", "CONTAINER_CONNECTION", "CONTAINERS_CONF", "CONTAINERS_REGISTRIES_CONF",
		"CONTAINERS_STORAGE_CONF", "REGISTRY_AUTH_FILE", "KIND_EXPERIMENTAL_PROVIDER",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy":
		return true
	}
	return false
}

// secretWords mark a variable's name as a credential's (compared upper-cased).
var secretWords = []string{"TOKEN", "PASSWORD", "PASSWD", "SECRET", "CREDENTIAL", "API_KEY", "APIKEY",
	"ACCESS_KEY", "PRIVATE_KEY", "AUTH_CONFIG"}

// urlPassword matches a URL whose user info has a password: scheme://user:password@host.
var urlPassword = lazy.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/@\s,|]*:[^/@\s,|]*@`)

func keepPrefix(k string) bool {
	switch {
	case strings.HasPrefix(k, "NUV_"), strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "LC_"):
		return true
	case strings.HasPrefix(k, "GO"):
		return !strings.HasPrefix(k, "GOOGLE")
	}
	return false
}

// Secret reports whether the variable k=v holds a credential by the rule above: its name speaks
// of one, or its value is a URL with a password.
func Secret(k, v string) bool {
	u := strings.ToUpper(k)
	for _, w := range secretWords {
		if strings.Contains(u, w) {
			return true
		}
	}
	return urlPassword.Get().MatchString(v)
}

// DaemonEnv reduces environ (KEY=VALUE entries) to what a detached process nuv starts inherits:
// what selects the user's tools and endpoints, without secrets (the rule is described above).
// Every detached start goes through Launch, which applies it.
func DaemonEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || !(daemonKey(k) || keepPrefix(k)) || Secret(k, v) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
