package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	whiskv1 "github.com/nuv-dev/nuv/operator/api/v1alpha1"
)

// Labels every object the operator creates carries; `nuv clean` deletes by them.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelName      = "app.kubernetes.io/name"
	// ManagedByValue is the value of LabelManagedBy on everything the operator creates.
	ManagedByValue = "whisk-operator"
)

// Default images. The controller's is nuv's whisk-controller (operator/cmd/whisk-controller, built
// by `nuv image workload`), the component the operator configures (environment, probes); the
// others are plausible public images. Local clusters run no containers, so nothing pulls them there.
const (
	DefaultControllerImage = "nuv.dev/whisk-controller:v1"
	DefaultRedisImage      = "redis:7"
	DefaultCouchDBImage    = "couchdb:3"
	DefaultStaticImage     = "nginx:1.27"
	DefaultStorage         = "1Gi"
	DefaultStaticPort      = 80
)

// Component names one part of a Whisk.
type Component string

// The components, in reconcile order.
const (
	Controller Component = "controller"
	Redis      Component = "redis"
	CouchDB    Component = "couchdb"
	Static     Component = "static"
)

// Components lists every component in reconcile order.
var Components = []Component{Controller, Redis, CouchDB, Static}

// ConditionType is the component's Ready condition type.
func (c Component) ConditionType() string {
	switch c {
	case Controller:
		return whiskv1.ConditionControllerReady
	case Redis:
		return whiskv1.ConditionRedisReady
	case CouchDB:
		return whiskv1.ConditionCouchDBReady
	default:
		return whiskv1.ConditionStaticReady
	}
}

// Enabled tells whether the Whisk's spec turns c on.
func (c Component) Enabled(w *whiskv1.Whisk) bool {
	switch c {
	case Controller:
		return w.Spec.Controller.Enabled
	case Redis:
		return w.Spec.Redis.Enabled
	case CouchDB:
		return w.Spec.CouchDB.Enabled
	default:
		return w.Spec.Static.Enabled
	}
}

// ObjectName is the name of c's main object (and of its Service) for Whisk w.
func (c Component) ObjectName(w *whiskv1.Whisk) string { return w.Name + "-" + string(c) }

// AuthSecretName is the name of the Secret holding the controller's API key: the spec's, or the
// one the operator creates.
func AuthSecretName(w *whiskv1.Whisk) string {
	if w.Spec.Controller.AuthSecret != "" {
		return w.Spec.Controller.AuthSecret
	}
	return w.Name + "-controller-auth"
}

// AuthSecretKey is the key of the API key "<uuid>:<key>" in the auth Secret.
const AuthSecretKey = "auth"

// StoreSecretName is the name of the Secret holding the credentials of the Whisk's Redis and
// CouchDB, which the operator makes once per Whisk (random, never changed, never logged).
func StoreSecretName(w *whiskv1.Whisk) string { return w.Name + "-store-auth" }

// Keys of the store Secret.
const (
	// RedisPasswordKey is Redis's password (requirepass; the controller's AUTH).
	RedisPasswordKey = "redis-password"
	// CouchDBUserKey and CouchDBPasswordKey are CouchDB's admin (the only user that can write).
	CouchDBUserKey     = "couchdb-user"
	CouchDBPasswordKey = "couchdb-password"
)

// CouchDBAdmin is the user name of the CouchDB admin the operator makes.
const CouchDBAdmin = "whisk-admin"

// InitJobName is the name of CouchDB's init Job.
func InitJobName(w *whiskv1.Whisk) string { return w.Name + "-couchdb-init" }

// labels are the labels of c's objects (selector, pod template, PVC template).
func labels(w *whiskv1.Whisk, c Component) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedByValue,
		LabelInstance:  w.Name,
		LabelComponent: string(c),
		LabelName:      "whisk",
	}
}

// selector is the immutable subset of labels used in selectors.
func selector(w *whiskv1.Whisk, c Component) map[string]string {
	return map[string]string{LabelInstance: w.Name, LabelComponent: string(c)}
}

func image(spec, def string) string {
	if spec != "" {
		return spec
	}
	return def
}

func replicas(p *int32, def int32) int32 {
	if p != nil {
		return *p
	}
	return def
}

func storage(s string) (resource.Quantity, error) {
	if s == "" {
		s = DefaultStorage
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, fmt.Errorf("storage %q: %w", s, err)
	}
	return q, nil
}
