#!/usr/bin/env bash
# A rootful podman of nuv's own for its tests (kind clusters on podman), kept apart from the host's
# podman the way hack/dockerd.sh keeps its dockerd apart: podman has no daemon, so "its own" is a
# configuration that the environment selects.
#
#   hack/podman.sh setup   install podman (Debian's package, apt, as root) if missing, build
#                          bin/nuv-runc, write the configuration below
#   hack/podman.sh env     print the exports that select it (eval "$(hack/podman.sh env)")
#   hack/podman.sh clean   remove its containers, volumes and networks made by tests (nuv-pod*)
#   hack/podman.sh restore undo what podman's CNI plugins changed on the host since setup: the
#                          CNI-* iptables chains that were not there (and the rules jumping to
#                          them), net.ipv4.ip_forward as it was (hack/test.sh runs it at the end)
#
# Nothing of the host's podman configuration is changed: CONTAINERS_CONF and
# CONTAINERS_STORAGE_CONF point at files under $NUV_PODMAN_RUN (default /run/nuv-test-podman),
# which put podman's images, containers and volumes under the user's cache
# ($NUV_PODMAN_DATA, default ${NUV_CACHE_DIR:-~/.cache/nuv}/podman, kept between runs), its run
# state under $NUV_PODMAN_RUN, and its CNI network files there too (not /etc/cni/net.d). This host
# has no systemd as PID 1, so cgroups are managed by podman itself (cgroupfs) and events go to a
# file. Containers run through bin/nuv-runc (registered as podman's "runc"), which removes the
# capabilities this host's bounding set lacks (this VM lacks CAP_SYS_RESOURCE, which privileged
# containers such as kind's nodes ask for) and, lacking it, lowers the resource limits rootful podman
# asks for (nofile 1048576, nproc 4194304) to those runc can set, before it executes runc.
#
# Unlike hack/dockerd.sh (no bridge, --iptables=false), a rootful podman network cannot publish a
# port without the host's firewall: podman's CNI plugins (bridge, portmap, firewall) add CNI-*
# iptables chains and per-container rules (removed with the container; the empty chains stay) and
# turn on net.ipv4.ip_forward. kind's nodes need them: the API server is published on 127.0.0.1.
# setup records the chains and ip_forward it found; restore puts them back once the tests are done.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
run=${NUV_PODMAN_RUN:-/run/nuv-test-podman}
cache=${NUV_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nuv}
data=${NUV_PODMAN_DATA:-$cache/podman}

install() {
  local missing=()
  command -v podman >/dev/null || missing+=(podman)
  command -v runc >/dev/null || [ -x /usr/sbin/runc ] || missing+=(runc)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "podman.sh: missing packages: ${missing[*]} (install them with apt-get, as root)" >&2
    exit 1
  fi
  echo "podman.sh: installing ${missing[*]} (apt)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

setup() {
  install
  if [ "$(id -u)" != 0 ]; then
    echo "podman.sh: kind's nodes need a rootful podman: run as root" >&2
    exit 1
  fi
  mkdir -p "$repo/bin" "$run/cni" "$run/tmp" "$data/storage" "$data/volumes"
  # what the host had before podman's CNI plugins touch it (kept from the first setup of a boot)
  [ -f "$run/ip_forward.before" ] || sysctl -n net.ipv4.ip_forward >"$run/ip_forward.before"
  for t in filter nat mangle; do
    [ -f "$run/chains.$t.before" ] || iptables -t "$t" -S 2>/dev/null | awk '$1=="-N" {print $2}' >"$run/chains.$t.before" || true
  done
  go build -o "$repo/bin/nuv-runc" ./hack/nuv-runc
  local lacks
  lacks=$("$repo/bin/nuv-runc" --nuv-missing-caps)
  # conmon runs the runtime with an empty environment: this script tells the wrapper where to
  # note what it changed
  cat >"$run/nuv-runc" <<EOF
#!/bin/sh
NUV_RUNC_LOG=$run/nuv-runc.log exec "$repo/bin/nuv-runc" "\$@"
EOF
  chmod +x "$run/nuv-runc"
  cat >"$run/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$data/storage"
runroot = "$run/storage"
EOF
  cat >"$run/containers.conf" <<EOF
[network]
network_backend = "cni"
network_config_dir = "$run/cni"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$run/events.log"
tmp_dir = "$run/tmp"
static_dir = "$data/storage/libpod"
volume_path = "$data/volumes"
runtime = "runc"

[engine.runtimes]
runc = ["$run/nuv-runc"]
EOF
  if [ -n "$lacks" ]; then
    echo "podman.sh: this host lacks $lacks: containers run through bin/nuv-runc, which removes it from their specs before runc (log: $run/nuv-runc.log)" >&2
  fi
  env CONTAINERS_CONF="$run/containers.conf" CONTAINERS_STORAGE_CONF="$run/storage.conf" podman info --format '{{.Version.Version}}' >/dev/null
  echo "podman.sh: ready: eval \"\$(hack/podman.sh env)\" selects it (configuration $run/containers.conf, storage $data)" >&2
}

clean() {
  eval "$(envs)"
  local ids v
  ids=$(podman ps -a --filter name=nuv-pod --format '{{.ID}}')
  [ -z "$ids" ] || podman rm -f $ids >/dev/null
  # kind labels each node's /var volume with the node's name (the label's key)
  for v in $(podman volume ls --quiet); do
    case "$(podman volume inspect --format '{{range $k, $_ := .Labels}}{{$k}} {{end}}' "$v")" in nuv-pod*) podman volume rm -f "$v" >/dev/null ;; esac
  done
}

restore() {
  command -v iptables >/dev/null || return 0
  local t c rule
  for t in filter nat mangle; do
    local added=()
    for c in $(iptables -t "$t" -S 2>/dev/null | awk '$1=="-N" && $2 ~ /^CNI-/ {print $2}'); do
      grep -qx -- "$c" "$run/chains.$t.before" 2>/dev/null || added+=("$c")
    done
    [ ${#added[@]} -eq 0 ] && continue
    # the rules of other chains that jump to them, then the chains themselves
    for c in "${added[@]}"; do
      iptables -t "$t" -S | awk -v c="$c" '$1=="-A" && $2 !~ /^CNI-/ && (" " $0 " ") ~ (" -j " c " ")' | sed 's/^-A /-D /' |
        while read -r rule; do eval "iptables -t $t $rule"; done
    done
    for c in "${added[@]}"; do iptables -t "$t" -F "$c"; done
    for c in "${added[@]}"; do iptables -t "$t" -X "$c" || true; done
    echo "podman.sh: removed the iptables chains podman's CNI plugins added ($t): ${added[*]}" >&2
  done
  if [ -f "$run/ip_forward.before" ] && [ "$(sysctl -n net.ipv4.ip_forward)" != "$(cat "$run/ip_forward.before")" ]; then
    sysctl -q -w net.ipv4.ip_forward="$(cat "$run/ip_forward.before")"
    echo "podman.sh: net.ipv4.ip_forward back to $(cat "$run/ip_forward.before")" >&2
  fi
}

envs() {
  echo "export CONTAINERS_CONF=$run/containers.conf CONTAINERS_STORAGE_CONF=$run/storage.conf"
}

case "${1:-}" in
setup) setup ;;
env) envs ;;
clean) clean ;;
restore) restore ;;
*) echo "usage: hack/podman.sh setup|env|clean|restore" >&2; exit 2 ;;
esac
