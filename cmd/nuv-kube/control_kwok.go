//go:build nuvkube_kwok

package main

// controlPlaneUsage is empty: the kwok-only build runs no control plane.
const controlPlaneUsage = ""

// runControlPlane knows no component in the kwok-only build.
func runControlPlane(string, []string) (int, bool) { return 0, false }
