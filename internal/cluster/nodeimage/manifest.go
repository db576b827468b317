package nodeimage

import "strings"

// CNIManifest is the node image's /kind/manifests/default-cni.yaml, which kind applies when a
// cluster is created (unless its config disables the default CNI): the nuv-podnet DaemonSet on
// every node (host network, NET_ADMIN), writing the node's CNI configuration into /etc/cni/net.d
// routing other nodes' pod ranges, and masquerading what pods send out of the cluster's pod
// ranges (see internal/cluster/nodeimage/podnet). kind fills in the pod subnet (POD_SUBNET) and
// patches in CONTROL_PLANE_ENDPOINT, so that it reaches the API server before kube-proxy serves the
// kubernetes Service: the markers below ask it to.
func CNIManifest(image string) string {
	return strings.ReplaceAll(cniManifest, "IMAGE", image)
}

const cniManifest = `# nuv-podnet: pod networking across the nodes of a kind cluster (nuv cluster node-image build)
# would you kindly patch this file
# would you kindly template this file
apiVersion: v1
kind: ServiceAccount
metadata:
  name: nuv-podnet
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: nuv-podnet
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: nuv-podnet
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: nuv-podnet
subjects:
- kind: ServiceAccount
  name: nuv-podnet
  namespace: kube-system
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nuv-podnet
  namespace: kube-system
  labels:
    app: nuv-podnet
spec:
  selector:
    matchLabels:
      app: nuv-podnet
  template:
    metadata:
      labels:
        app: nuv-podnet
    spec:
      hostNetwork: true
      dnsPolicy: Default
      serviceAccountName: nuv-podnet
      priorityClassName: system-node-critical
      tolerations:
      - operator: Exists
      containers:
      - name: nuv-podnet
        image: IMAGE
        imagePullPolicy: IfNotPresent
        args: [--cni-conf-dir=/etc/cni/net.d]
        env:
        - name: NODE_NAME
          valueFrom:
            fieldRef:
              fieldPath: spec.nodeName
        - name: POD_SUBNET
          value: "{{ .PodSubnet }}"
        securityContext:
          capabilities:
            add: [NET_ADMIN]
        resources:
          requests:
            cpu: 10m
            memory: 20Mi
        volumeMounts:
        - name: cni-cfg
          mountPath: /etc/cni/net.d
      volumes:
      - name: cni-cfg
        hostPath:
          path: /etc/cni/net.d
          type: DirectoryOrCreate
`
