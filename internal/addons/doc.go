// Package addons installs what a test cluster needs besides the operator (cert-manager, an ingress
// controller, a metrics stack, CRDs of other projects), versioned, planned and pruned, on any
// cluster in clusters/.
//
// An index (YAML, apiVersion nuv.dev/v1alpha1, kind Addons; addons/index.yaml by default) lists
// add-ons: a name, a version, a source (a directory of manifests, a kustomization, a Helm chart
// from an OCI registry or a chart repository at a pinned version, or a manifest URL pinned by its
// digest), a selector (cluster types, node labels), a Kubernetes version range, dependencies and
// prune rules; and stacks, named groups of add-ons with shared chart values. Load decodes it
// strictly: unknown fields, dangling dependencies and cycles are errors naming the file and line.
//
// The cluster itself records what is installed: one ConfigMap per add-on in the nuv-addons
// namespace, which is the add-on's ApplySet parent (KEP-3659: the applyset.kubernetes.io/id label,
// the tooling, contains-group-kinds and additional-namespaces annotations; every member object
// carries applyset.kubernetes.io/part-of) and holds the version, the manifest hash and the
// inventory of objects. Any machine sees the same state.
//
// MakePlan compares the index with that state: install, upgrade (old to new version), unchanged,
// remove (installed, no longer in the index) or skipped (selector or version range, with the
// reason). Apply executes a plan in dependency order with server-side apply, waits for each
// add-on's CRDs and workloads with progress, prunes what a new version no longer contains, and
// then records the new state; an unchanged add-on is not touched at all. Remove deletes an add-on's
// objects (its CRDs only when its prune rules say so) and its record.
//
// ClusterStep is a cluster spec's add-ons (spec.addons) as a step of the lifecycle engine
// (cluster.Step): planned and applied with the cluster, registered by the programs that build the
// engine. The same functions serve `nuv addons` (package addonscmd) and other callers: Load (the index), Connect or NewTarget (the cluster), MakePlan (Options.Only
// and Options.Stacks select; Plan.Steps and Plan.Print show it), Execute (or Apply, which plans
// and executes), RemoveAddons and Status.
package addons
