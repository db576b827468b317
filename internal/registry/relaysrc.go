package registry

import _ "embed"

// RelaySource is the source of nuv-registry-relay (relay/main.go, standard library only), the
// program of the container that lets kind nodes reach this registry by name on their network
// without the registry listening anywhere but 127.0.0.1 and its unix socket. nuv builds it into
// an image offline (package kind).
//
//go:embed relay/main.go
var RelaySource []byte
