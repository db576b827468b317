// Package bootstrap turns a set of machines into a highly available Kubernetes cluster with
// kubeadm, the way kOps and ksctl bootstrap self-managed clusters: an optional HAProxy
// load-balancer machine in front of the API servers, an optional external etcd tier, `kubeadm init
// --upload-certs` on the first control plane with the load balancer as controlPlaneEndpoint, the
// other control planes joined one at a time with the uploaded certificates, workers joined with a
// bootstrap token and the CA hash, nuv's pod network (the node image's default CNI manifest) and the
// admin kubeconfig read back through the endpoint.
//
// The package knows machines only through Machine (run a script, read and write a file), so the
// same steps run over SSH on cloud instances and through `docker exec` on node-image containers.
// Each step is a method of Bootstrap that a provider records as a plan resource of its own (Steps
// lists them in order). Every step looks at the machine before it acts and does nothing when its
// work is already there (/etc/kubernetes/admin.conf on the first control plane means init is done:
// never a second `kubeadm init`; /etc/kubernetes/kubelet.conf means a node has joined; an etcd
// member in the member list is not added again), so an apply killed anywhere resumes by running
// the steps again. kubeadm writes admin.conf and kubelet.conf part-way through, so completion is
// nuv's own marker (/etc/kubernetes/nuv/init.done, join.done), written by the same script right
// after kubeadm succeeds: a resumed step first waits for a kubeadm still running on the machine (a
// killed apply's docker exec or SSH session may leave it running), then finds it completed, or
// finds a part-way init or join, which it resets (kubeadm reset; for a control plane its etcd
// member removed, for any node its Node deleted) before running it again. No machine joins before
// init completed, so resetting a part-way init loses nothing.
//
// kubeadm's preflight phase is skipped (as kind does): its checks assume a whole machine (kernel
// configuration, swap, pulling images), while nuv's machines carry the images kubeadm lists.
//
// External etcd (Cluster.Etcd): nuv makes the etcd CA, each member's server and peer certificates
// and the API servers' etcd client certificate (ECDSA P-256, crypto/x509), writes them where kubeadm
// expects them, and runs each member as a static pod of the machine's kubelet, its manifest written
// by `kubeadm init phase etcd local`: the manifest then names the etcd image kubeadm of this
// Kubernetes version asks for (pre-loaded in nuv's node image) with kubeadm's own flags, probes and
// paths, exactly as a stacked member would run, and nuv adds only the cluster membership flags. The
// first member starts a new cluster; each next one is added to the member list (etcd's runtime
// reconfiguration) before it starts with initial-cluster-state=existing, one at a time, each
// checked in the member list before the next. nuv talks to etcd itself with the etcd v3 client and a
// short-lived client certificate it signs in memory with the etcd CA read from a member, so member
// add, list and remove (RemoveEtcdMember, for a dead control plane or etcd machine) need no etcdctl
// in the machine and no port-forward: the client dials the members' addresses (Bootstrap.Dial
// can route the connection, e.g. through an SSH client).
//
// Secrets: the bootstrap token, the certificate key and private keys travel to machines in files
// of mode 0600 or on a script's standard input, never in a script's text or an error; kubeadm is
// told not to print them, and command output quoted in errors has them redacted.
package bootstrap
