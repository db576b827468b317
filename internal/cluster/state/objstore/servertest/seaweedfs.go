package servertest

// SeaweedFSVersion is the SeaweedFS module version the tests run (hack/state-servers.sh builds it).
const SeaweedFSVersion = "v0.0.0-20261109003541-7506e5f91cd6"
