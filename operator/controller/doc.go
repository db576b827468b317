// Package controller is the Whisk reconciler of nuv's reference operator. For every Whisk it
// creates or updates the enabled components (controller Deployment, Redis and CouchDB StatefulSets
// with PVC templates, the CouchDB init Job, the static-content Deployment and Service), deletes the
// components turned off (their PVCs included), reports per-component and overall Ready conditions,
// and cleans everything up through a finalizer when the Whisk is deleted.
package controller
