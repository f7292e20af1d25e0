// Package kubernetes holds the Kubernetes recipes for clmemprobe (kustomize bases and overlays) and the test
// that validates them offline against the Kubernetes API types. It is its own module, so the API types stay
// out of the tool's dependencies.
package kubernetes
