#!/usr/bin/env bash
# nuv's test command (the README names it; CI runs it through .ci/run).
#
# On a fresh Debian 12 machine with Go it installs what the tests need (Debian's docker-registry and
# apache2-utils for the registry tests, awscli for the AWS emulator's, git, bzip2, fish and zsh for the
# completion scripts; docker.io and debootstrap for the kind tests), builds nuv and the companion
# binary of local clusters (cached after the first run), starts a Docker daemon of its own
# (hack/dockerd.sh) and builds the offline kind node image (cached), then runs every package's
# tests, integration tests included.
# Pass -short to skip the integration tests (the only switch that skips any); -run, -skip, -p and
# -timeout go to the test runner (hack/testrun: go test -json with test binaries cached by content),
# as to `go test`. The report ends with every skipped test and its reason, and "N passed, N failed, N
# skipped". Tests keep their state (and so the pid files of the clusters and registries they start)
# under a TMPDIR of this run; when the script ends, whatever happened, every process recorded there
# still running is stopped and counted (hack/reap), and every container, volume and network the
# tests made on docker and podman and did not remove is named, failing the run (hack/leftovers).
set -euo pipefail
cd "$(dirname "$0")/.."
run_started=$EPOCHREALTIME
load_at_start=$(cat /proc/loadavg 2>/dev/null || true)

step() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }

# Test artifacts a person may want to look at: the screenshot of the HTML report, go test's event
# stream, each setup stage's log (stages/NAME.log) and the run's bill (budget.json).
export NUV_TEST_ARTIFACTS=${NUV_TEST_ARTIFACTS:-$PWD/_test-artifacts}
STAGE_DIR=$NUV_TEST_ARTIFACTS/stages
rm -rf "$STAGE_DIR"
mkdir -p "$STAGE_DIR"
rm -f "$NUV_TEST_ARTIFACTS/go-test.json" "$NUV_TEST_ARTIFACTS/budget.json"
# shellcheck source=hack/stages.sh
source hack/stages.sh

step "system packages"
missing=()
command -v git >/dev/null || missing+=(git)
command -v docker-registry >/dev/null || missing+=(docker-registry)
command -v htpasswd >/dev/null || missing+=(apache2-utils)
command -v aws >/dev/null || missing+=(awscli) # the AWS emulator's tests drive the aws CLI too
command -v bzip2 >/dev/null || missing+=(bzip2)
command -v chromium >/dev/null || missing+=(chromium) # the HTML report is checked in headless Chromium
command -v fish >/dev/null || missing+=(fish) # the completion scripts are tested in real shells
command -v zsh >/dev/null || missing+=(zsh)
command -v npm >/dev/null || missing+=(npm) # the workload's couchdb image installs pouchdb-server with it
command -v redis-server >/dev/null || missing+=(redis-server) # operator/whiskapi's tests run a real Redis
command -v podman >/dev/null || missing+=(podman) # a kind cluster on podman (hack/podman.sh, TestIntegrationKindPodman)
short=false
for a in "$@"; do case "$a" in -short|-short=true|-test.short|-test.short=true) short=true ;; esac; done
if ! $short && ! command -v kubectl >/dev/null; then
  # Debian has no kubectl package; the machines nuv is developed and tested on have one preinstalled
  echo "kubectl is required by the local-cluster integration tests (internal/cluster/localkube) and is not on PATH;" >&2
  echo "install it, or pass -short to skip the integration tests" >&2
  exit 1
fi
if ! command -v terraform >/dev/null; then
  # Not in Debian either; preinstalled on nuv's machines. The providers' Terraform output is checked
  # with `terraform fmt -check` (offline: no provider plug-in is downloaded).
  echo "terraform is required by the Terraform-output tests (internal/cluster/tfgen and the cloud providers) and is not on PATH; install terraform >= 1.5" >&2
  exit 1
fi
if ! $short && ! command -v gcloud >/dev/null; then
  # Debian has no gcloud package (google-cloud-cli comes from Google's apt repository); nuv's machines
  # have it preinstalled
  echo "gcloud is required by the GKE integration tests (internal/cluster/gke drives it against the" >&2
  echo "GKE emulator's REST API) and is not on PATH; install google-cloud-cli, or pass -short" >&2
  exit 1
fi
apt_install() {
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    stage_run "system packages" "" "" apt_install "${missing[@]}"
  else
    echo "missing packages: ${missing[*]} (install them with apt-get, as root)" >&2
    exit 1
  fi
fi
# Debian's docker-registry package starts a system service on :5000; the tests start their own.
if command -v systemctl >/dev/null && systemctl is-active --quiet docker-registry 2>/dev/null; then
  systemctl stop docker-registry || true
fi

build_nuv() {
  mkdir -p bin
  go build -o bin/nuv ./nuv
  ln -sf nuv bin/task
  go build -o bin/testsummary ./hack/testsummary
  go build -o bin/testbudget ./hack/testbudget
  go build -o bin/reap ./hack/reap
  go build -o bin/leftovers ./hack/leftovers
  go build -o bin/testrun ./hack/testrun
}
stage_run "build nuv" "" "" build_nuv
export PATH="$PWD/bin:$PATH"

# The tests' temporary directories, hence the pid files of every cluster and registry they start.
# A test binary that panics, times out or is killed leaves those processes running: stop them here
# at the end, whatever happened.
test_tmp=$(mktemp -d /tmp/nuv-test.XXXXXX)
docker_started=false
podman_setup=false
finish() {
  rc=$?
  stage_stop_all # a setup stage still running when another failed or the run was interrupted
  step "stop processes the tests left running"
  "$PWD/bin/reap" "$test_tmp" || rc=1
  if [ -f "$test_tmp/runtime-objects.json" ]; then
    # what the runtimes this run started have now and did not have before the tests: left by a
    # test that did not clean up (named; the run fails)
    step "containers, volumes and networks the tests left"
    "$PWD/bin/leftovers" check "$test_tmp/runtime-objects.json" || rc=1
  fi
  if $docker_started; then
    bash hack/dockerd.sh stop || rc=1
  fi
  if $podman_setup; then # podman's CNI plugins changed the host's firewall and ip_forward: undo it
    bash hack/podman.sh restore || rc=1
  fi
  rm -rf "$test_tmp"
  if [ -x bin/testbudget ]; then
    # the run's bill, for `go run ./bench/testtime A B` (a failed run has one too)
    local commit
    commit=$(git rev-parse --short HEAD 2>/dev/null || true)
    if [ -n "$commit" ] && ! git diff --quiet HEAD 2>/dev/null; then commit+=-dirty; fi
    bin/testbudget -o "$NUV_TEST_ARTIFACTS/budget.json" -stages "$STAGE_DIR/stages.tsv" \
      -events "$NUV_TEST_ARTIFACTS/go-test.json" -started "$run_started" -load "$load_at_start" -commit "$commit" || rc=1
  fi
  exit $rc
}
trap finish EXIT
trap 'exit 130' INT TERM # so that an interrupted run still reaches finish

# The setup stages, each with its output in $STAGE_DIR/NAME.log (hack/stages.sh), at once where
# they neither depend on each other nor compile the same Go packages: two go commands do not
# share work in progress, so on a fresh machine two builds of the same packages at once would
# compile them twice. The full program compiles most of what the tests import; vet then compiles
# the rest (the tests' own imports, nuv-kube's and nuv-node's Kubernetes packages: 1,588 and 1,823
# packages the full program does not import) and type-checks everything; the local-cluster
# binaries and the node image then only link. Beside those Go builds run what compiles nothing of
# theirs: starting the container runtimes, and the workload images (Debian packages, npm, and a
# controller built static with -trimpath: build settings of its own).
#
# nuv's full program: bin/nuv is the slim front: it answers `nuv kube` and `nuv -version` itself and
# hands every other command to the full program (internal/front), which it builds from its
# embedded sources once per source version (cold minutes, warm a second), and beside it, in the
# same source directory with the same flags, the task program and the emulators' program
# (nuv-task, nuv-emulator: they compile only the emulators' five packages, which the full program
# does not link, and nothing twice). This is the path users take; the tests then use that build
# through NUV_FULL, so a test that runs nuv with a HOME of its own finds it too, and `nuv emulator`
# (through the slim nuv or nuv-full) finds nuv-emulator beside it.
full_program() { NUV_FULL= bin/nuv -full >"$PWD/bin/.nuv-full-path"; }
stage_start "full program" "building nuv-full" "" full_program
if ! $short; then
  # The docker daemon of the kind tests (hack/dockerd.sh: its own socket and data root): one
  # started before this run (by a person, or a previous run left running on purpose) is used and
  # left running; one started here is stopped at the end. podman for the kind-on-podman test
  # (hack/podman.sh: its own configuration and storage; no daemon: CONTAINERS_CONF and
  # CONTAINERS_STORAGE_CONF select it for this run; the host's podman setup is not touched; the
  # test loads the node image into it, about 25 s, then kept).
  bash hack/dockerd.sh status >/dev/null 2>&1 || docker_started=true
  podman_setup=true
  runtimes() {
    bash hack/dockerd.sh start
    bash hack/podman.sh setup
  }
  stage_start "container runtimes" "" "" runtimes
fi
stage_wait "full program"
NUV_FULL=$(cat "$PWD/bin/.nuv-full-path")
export NUV_FULL
echo "full program: $NUV_FULL (nuv-task and nuv-emulator beside it)"
if ! $short; then
  # redis, nginx and pouchdb-server (couchdb) on Debian's packages, and nuv's whisk-controller
  # compiled from operator/cmd/whisk-controller, cached by content under ~/.cache/nuv/debimage
  # (debootstrap + go-containerregistry; cold minutes, warm seconds); the kind workload test loads
  # them into its cluster's nodes.
  stage_start "workload images" "image .* built in" "from the cache" nuv image workload
  # Azure's JavaScript SDK, which the Azure emulator's TestIntegrationJavaScriptSDK drives
  # (hack/azure-js.sh: npm, cached by its package.json's digest, where the test looks for it)
  stage_start "Azure JavaScript SDK" "" "" bash hack/azure-js.sh
  # The servers the shared state stores are tested against (hack/state-servers.sh: SeaweedFS's S3
  # built from its Go module, cached by version, where internal/cluster/state/objstore/servertest
  # looks for it)
  stage_start "state-store servers" "building .* from source once" "" bash hack/state-servers.sh
fi
stage_run vet "" "" go vet ./...
stage_check # the workload images may have failed meanwhile
# etcd, kube-apiserver, controller-manager, scheduler and kwok of local clusters: built or
# downloaded once, then cached
stage_start "local-cluster binaries" "building .* from source once" "" nuv cluster prepare
if ! $short; then
  stage_wait "container runtimes"
  eval "$(bash hack/dockerd.sh env)"
  eval "$(bash hack/podman.sh env)"
  # Assembled offline (debootstrap, Kubernetes built from source, images with
  # go-containerregistry) and cached by content under ~/.cache/nuv/nodeimage; the kind tests use
  # it (cold tens of minutes, warm seconds).
  stage_start "kind node image" "node image .* built in" "from the cache|already" nuv cluster node-image build --load
  stage_wait "local-cluster binaries" "workload images" "Azure JavaScript SDK" "state-store servers" "kind node image"
else
  stage_wait "local-cluster binaries"
fi

step "tests"
if ! $short; then
  # What docker and podman have before the tests: at the end, anything more is what the tests left.
  bin/leftovers snapshot "$test_tmp/runtime-objects.json" docker podman
fi
# -count=1: every run really runs the tests (results are never taken from the build cache).
# go test starts the packages' tests in the order it is given them, -p at a time: a package of
# minutes that starts last runs alone at the end while the other slots idle. So testrun starts the
# longest first, by each package's wall time in the last run of the same kind on this machine
# (-history: ~/.cache/nuv/testrun/history-full.json, or -short.json; packages it does not know go
# first). On a machine with no history yet, the order below does that job: the slowest packages
# (figures of a warm run on 2 cores), then ./..., each package once.
slow_first=(
  ./internal/cluster/awsmachines   # 606-647 s
  ./internal/allkubes              # 558-577 s
  ./internal/cluster/clustercmd    # 390 s
  ./internal/cluster/eks           # 190 s
  ./internal/image/debimage        # 140 s
  ./internal/emulator/aws          # 132 s
  ./internal/cluster/localkube     # 127-137 s
  ./internal/release               # 113-123 s
  ./internal/cluster/aks           # 108 s
  ./internal/cluster/kind          # 91 s
  ./internal/addons                # 76-80 s
  ./internal/kube/kubecmd          # 67-70 s
  ./internal/cluster/gke           # 66-69 s
)
history=${NUV_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nuv}/testrun/history-$($short && echo short || echo full).json
# The raw event stream is kept beside the report ($NUV_TEST_ARTIFACTS/go-test.json): every test's
# time and output, for finding where a run's time went.
mkdir -p "$NUV_TEST_ARTIFACTS"
# -vet=off: the vet stage above ran every analyser over every package; go test's own subset would
# run again for each test binary (about a minute of CPU in a run).
# testrun (hack/testrun) is go test -json -count=1 -vet=off with the test binaries cached by content
# (internal/testcache): a package whose compiled code and dependencies did not change is not linked
# again; every test still runs. It takes go test's -p, -timeout, -short, -run and -skip.
# -ldflags=-w: test binaries are linked without DWARF (nobody debugs them here; stack traces do
# not need it): a test binary of the cluster packages links in 21 s of CPU instead of 33, and a
# run links about a hundred of them.
# -p: how many packages build and test at once. The integration tests spend much of a run
# waiting (kubeadm, kubelets registering, health checks, rolls): 22-25 % of the CPU time idle
# over two warm runs at -p 2 on 2 cores, and still 20 % at -p 3 with the longest packages first
# (their waits overlap at the start: 1,164 s, 1,823 CPU seconds busy of 2,328), so two more
# packages than cores.
jobs=${NUV_TEST_JOBS:-$(( $(nproc) + 2 ))}
# The tests are a stage too (their wall and CPU time go into budget.json), with their output live.
set +e
{
  TIMEFORMAT='%3R %3U %3S'
  time {
    TMPDIR=$test_tmp testrun -ldflags=-w -history "$history" -p "$jobs" -timeout 70m "$@" "${slow_first[@]}" ./... |
      tee "$NUV_TEST_ARTIFACTS/go-test.json" | testsummary -stages "$STAGE_DIR/stages.tsv"
  } 2>&3
} 3>&2 2>"$STAGE_DIR/.tests.time"
rc=$?
set -e
read -r wall user sys < <(awk 'NF == 3 && $1 ~ /^[0-9.]+$/ { t = $0 } END { print (t == "" ? "0 0 0" : t) }' "$STAGE_DIR/.tests.time")
printf '%s\t%s\t%s\t%s\t%d\t\n' tests "$wall" "$user" "$sys" "$rc" >>"$STAGE_DIR/stages.tsv"
exit "$rc"
