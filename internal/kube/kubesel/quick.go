package kubesel

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// The inventory (package kube) reads every kubeconfig of clusters/ on each `nuv kube list`, the
// task program's selection reader (SelectionEnv) the selected one on each `task`, and both need
// only a few names and the server URL. client-go's clientcmd.Load turns the YAML into JSON, decodes
// it with the API machinery and converts it to the internal types: about 0.3 ms a file here, and
// 85 linked packages. Quick reads the same fields straight from the YAML tree, for the kubeconfigs
// tools write (kubeadm, kind, eksctl, nuv): it answers only when it is certain that clientcmd.Load
// would accept the file and find the same values, and otherwise says so (ok false) and the caller
// asks clientcmd. FuzzQuickKubeconfig (package kube) holds it to that: whenever it answers,
// clientcmd agrees.

// Model is what the inventory and the selection need of a kubeconfig, from either reader (Quick,
// or client-go's in package kube).
type Model struct {
	Current  string                // current-context
	Contexts map[string]ContextRef // by context name
	Clusters map[string]string     // server URL by cluster name
	Users    map[string]bool       // user names
}

// ContextRef is what a context names.
type ContextRef struct{ Cluster, User string }

// Pick returns the context nuv uses (the current-context, or the only context when
// current-context is empty) and its server URL, or why the kubeconfig cannot be used.
func (m Model) Pick() (ctxName, server string, err error) {
	ctxName = m.Current
	if ctxName == "" {
		switch len(m.Contexts) {
		case 0:
			return "", "", errors.New("no contexts defined")
		case 1:
			for n := range m.Contexts {
				ctxName = n
			}
		default:
			return "", "", fmt.Errorf("no current-context and %d contexts to choose from", len(m.Contexts))
		}
	}
	kctx, ok := m.Contexts[ctxName]
	if !ok {
		return "", "", fmt.Errorf("current-context %q is not defined in contexts", ctxName)
	}
	server, ok = m.Clusters[kctx.Cluster]
	if !ok {
		return "", "", fmt.Errorf("context %q names cluster %q, which is not defined", ctxName, kctx.Cluster)
	}
	if server == "" {
		return "", "", fmt.Errorf("cluster %q has no server URL", kctx.Cluster)
	}
	if kctx.User != "" && !m.Users[kctx.User] {
		return "", "", fmt.Errorf("context %q names user %q, which is not defined", ctxName, kctx.User)
	}
	return ctxName, server, nil
}

// Quick reads data as a kubeconfig without client-go. ok is false when the file holds
// anything it does not vouch for (YAML 1.1 spellings, anchors, extensions, unusual types, several
// documents, a duplicate key or name): the caller then asks clientcmd, which also words the error.
func Quick(data []byte) (m Model, ok bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return m, false
	}
	var more yaml.Node
	if dec.Decode(&more) == nil {
		return m, false // several documents
	}
	root := doc.Content[0]
	if !plainTree(root) || !configSchema.Get().check(root) {
		return m, false
	}
	if str(get(root, "apiVersion")) != "v1" || str(get(root, "kind")) != "Config" {
		return m, false
	}
	m = Model{Current: str(get(root, "current-context")), Contexts: map[string]ContextRef{},
		Clusters: map[string]string{}, Users: map[string]bool{}}
	for _, e := range items(get(root, "clusters")) {
		n := str(get(e, "name"))
		if _, dup := m.Clusters[n]; dup || n == "" {
			return m, false
		}
		m.Clusters[n] = str(get(get(e, "cluster"), "server"))
	}
	for _, e := range items(get(root, "contexts")) {
		n := str(get(e, "name"))
		if _, dup := m.Contexts[n]; dup || n == "" {
			return m, false
		}
		c := get(e, "context")
		m.Contexts[n] = ContextRef{Cluster: str(get(c, "cluster")), User: str(get(c, "user"))}
	}
	for _, e := range items(get(root, "users")) {
		n := str(get(e, "name"))
		if m.Users[n] || n == "" {
			return m, false
		}
		m.Users[n] = true
	}
	return m, true
}

// plainTree refuses what YAML 1.1 (clientcmd's reader) and YAML 1.2 (this one) read differently or
// what the JSON step refuses: aliases, merge keys, non-string or duplicate keys, explicit tags,
// and plain scalars YAML 1.1 reads as something else than YAML 1.2 does (yes, on, .inf, ...).
func plainTree(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Style&yaml.TaggedStyle != 0 || n.Anchor != "" {
			return false
		}
		return n.Style != 0 || !ambiguousPlain(n.Value)
	case yaml.SequenceNode:
		if n.Anchor != "" || n.Tag != "!!seq" {
			return false
		}
		for _, c := range n.Content {
			if !plainTree(c) {
				return false
			}
		}
		return true
	case yaml.MappingNode:
		if n.Anchor != "" || n.Tag != "!!map" {
			return false
		}
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" || k.Value == "<<" || seen[k.Value] || !plainTree(k) || !plainTree(n.Content[i+1]) {
				return false
			}
			seen[k.Value] = true
		}
		return true
	}
	return false // aliases, documents
}

// ambiguousPlain reports a plain scalar that might not be the same string under YAML 1.1 and 1.2
// or that the JSON step rejects: anything starting like a number, a boolean or null of YAML 1.1,
// and the infinities and NaN. true and false are booleans in both.
func ambiguousPlain(s string) bool {
	if s == "" || s == "~" || s == "=" || s == "<<" {
		return true
	}
	digit := func(i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	switch lower := strings.ToLower(s); {
	case digit(0):
		return true
	case (s[0] == '+' || s[0] == '-') && (digit(1) || (len(s) > 1 && s[1] == '.')):
		return true
	case s[0] == '.' && (digit(1) || strings.HasPrefix(lower, ".inf") || strings.HasPrefix(lower, ".nan")):
		return true
	case lower == "y" || lower == "yes" || lower == "n" || lower == "no" ||
		lower == "on" || lower == "off" || lower == "null":
		return true
	}
	return false
}

// shape is the expected type of a node, as client-go's v1 kubeconfig types declare it.
type shape struct {
	kind   shapeKind
	fields map[string]*shape // object fields (unknown ones are ignored, as the JSON decoder does)
	elem   *shape            // list elements, map values
}

type shapeKind int

const (
	sString shapeKind = iota // a string
	sBool                    // true or false
	sBytes                   // standard base64 ([]byte)
	sList                    // a sequence of elem
	sMap                     // a mapping of string to elem
	sObject                  // a mapping with fields
	sRefuse                  // present at all: not vouched for (extensions)
)

func (s *shape) check(n *yaml.Node) bool {
	switch s.kind {
	case sString:
		return n.Kind == yaml.ScalarNode && n.Tag == "!!str"
	case sBool:
		return n.Kind == yaml.ScalarNode && n.Style == 0 && (n.Value == "true" || n.Value == "false")
	case sBytes:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			return false
		}
		_, err := base64.StdEncoding.DecodeString(n.Value)
		return err == nil
	case sList:
		if n.Kind != yaml.SequenceNode {
			return false
		}
		for _, c := range n.Content {
			if !s.elem.check(c) {
				return false
			}
		}
		return true
	case sMap:
		if n.Kind != yaml.MappingNode {
			return false
		}
		for i := 1; i < len(n.Content); i += 2 {
			if !s.elem.check(n.Content[i]) {
				return false
			}
		}
		return true
	case sObject:
		if n.Kind != yaml.MappingNode {
			return false
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if f := s.fields[n.Content[i].Value]; f != nil && !f.check(n.Content[i+1]) {
				return false
			}
		}
		return true
	}
	return false
}

func object(fields map[string]*shape) *shape { return &shape{kind: sObject, fields: fields} }
func listOf(e *shape) *shape                 { return &shape{kind: sList, elem: e} }

// configSchema is client-go's clientcmd/api/v1 Config, built on first use (no work at init). A
// YAML null anywhere is refused by plainTree's ambiguousPlain (a plain empty value or ~), so no
// field needs to allow it.
var configSchema = lazy.Value[*shape]{New: configShape}

func configShape() *shape {
	var (
		tString    = &shape{kind: sString}
		tBool      = &shape{kind: sBool}
		tBytes     = &shape{kind: sBytes}
		tStrings   = listOf(tString)
		tExtension = &shape{kind: sRefuse} // not vouched for
	)
	return object(map[string]*shape{
		"kind":            tString,
		"apiVersion":      tString,
		"current-context": tString,
		"preferences":     object(map[string]*shape{"colors": tBool, "extensions": tExtension}),
		"extensions":      tExtension,
		"clusters": listOf(object(map[string]*shape{"name": tString, "cluster": object(map[string]*shape{
			"server": tString, "tls-server-name": tString, "insecure-skip-tls-verify": tBool,
			"certificate-authority": tString, "certificate-authority-data": tBytes, "proxy-url": tString,
			"disable-compression": tBool, "extensions": tExtension,
		})})),
		"contexts": listOf(object(map[string]*shape{"name": tString, "context": object(map[string]*shape{
			"cluster": tString, "user": tString, "namespace": tString, "extensions": tExtension,
		})})),
		"users": listOf(object(map[string]*shape{"name": tString, "user": object(map[string]*shape{
			"client-certificate": tString, "client-certificate-data": tBytes, "client-key": tString,
			"client-key-data": tBytes, "token": tString, "tokenFile": tString, "as": tString,
			"as-uid": tString, "as-groups": tStrings, "as-user-extra": &shape{kind: sMap, elem: tStrings},
			"username": tString, "password": tString, "extensions": tExtension,
			"auth-provider": object(map[string]*shape{"name": tString, "config": &shape{kind: sMap, elem: tString}}),
			"exec": object(map[string]*shape{
				"command": tString, "args": tStrings, "apiVersion": tString, "installHint": tString,
				"provideClusterInfo": tBool, "interactiveMode": tString,
				"env": listOf(object(map[string]*shape{"name": tString, "value": tString})),
			}),
		})})),
	})
}

// get returns the value of key in mapping n (nil if n is nil, not a mapping, or lacks key).
func get(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func str(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

func items(n *yaml.Node) []*yaml.Node {
	if n == nil {
		return nil
	}
	return n.Content
}
