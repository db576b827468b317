package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types the operator reports in WhiskStatus.Conditions.
const (
	// ConditionReady is the overall condition: every enabled component is ready.
	ConditionReady = "Ready"
	// ConditionControllerReady, ConditionRedisReady, ConditionCouchDBReady and ConditionStaticReady
	// are the per-component conditions; a disabled component has none.
	ConditionControllerReady = "ControllerReady"
	ConditionRedisReady      = "RedisReady"
	ConditionCouchDBReady    = "CouchDBReady"
	ConditionStaticReady     = "StaticReady"
)

// Finalizer is the finalizer the operator puts on every Whisk to clean up on delete (PVCs included,
// which garbage collection would leave behind).
const Finalizer = "nuv.dev/whisk-cleanup"

// Whisk is one deployment of the reference stack.
type Whisk struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WhiskSpec   `json:"spec,omitempty"`
	Status WhiskStatus `json:"status,omitempty"`
}

// WhiskList is a list of Whisks.
type WhiskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Whisk `json:"items"`
}

// WhiskSpec enables and configures the components.
type WhiskSpec struct {
	// Controller is the stateless controller Deployment.
	Controller ControllerSpec `json:"controller,omitempty"`
	// Redis is a Redis-like StatefulSet with a PVC template.
	Redis StoreSpec `json:"redis,omitempty"`
	// CouchDB is a CouchDB-like StatefulSet with a PVC template and an init Job.
	CouchDB StoreSpec `json:"couchdb,omitempty"`
	// Static is an optional static-content Deployment behind a Service.
	Static StaticSpec `json:"static,omitempty"`
}

// ControllerSpec configures the controller Deployment (nuv's whisk-controller: the Whisk's API).
type ControllerSpec struct {
	Enabled  bool   `json:"enabled,omitempty"`
	Image    string `json:"image,omitempty"`
	Replicas *int32 `json:"replicas,omitempty"`
	// AuthSecret names a Secret in the Whisk's namespace whose key "auth" is the API key
	// "<uuid>:<key>"; empty: the operator creates <name>-controller-auth with a random key.
	AuthSecret string `json:"authSecret,omitempty"`
	// RequestsPerMinute is the API's limit per namespace (counted in Redis); 0: the controller's
	// default.
	RequestsPerMinute int32 `json:"requestsPerMinute,omitempty"`
}

// StoreSpec configures a stateful component.
type StoreSpec struct {
	Enabled bool   `json:"enabled,omitempty"`
	Image   string `json:"image,omitempty"`
	// Storage is the size of each replica's volume (a quantity such as 1Gi).
	Storage string `json:"storage,omitempty"`
	// StorageClass is the StorageClass of the volumes; empty means the cluster's default.
	StorageClass string `json:"storageClass,omitempty"`
}

// StaticSpec configures the static-content Deployment and its Service.
type StaticSpec struct {
	Enabled  bool   `json:"enabled,omitempty"`
	Image    string `json:"image,omitempty"`
	Replicas *int32 `json:"replicas,omitempty"`
	Port     int32  `json:"port,omitempty"`
}

// WhiskStatus is what the operator observed.
type WhiskStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready and one <Component>Ready per enabled component.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
