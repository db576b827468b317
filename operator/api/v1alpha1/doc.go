// Package v1alpha1 holds the Whisk custom resource (group nuv.dev, version v1alpha1) of nuv's
// reference operator: a spec that turns components on and off and a status with per-component and
// overall Ready conditions. DeepCopy methods are hand-written in zz_deepcopy.go.
package v1alpha1
