#!/usr/bin/env bash
# A Docker daemon of nuv's own for its tests (kind clusters, node images): hack/test.sh starts it
# and stops it at the end.
#
#   hack/dockerd.sh start    install docker.io and debootstrap (apt, as root) if missing, build
#                            bin/nuv-runc, start the daemon and wait until it answers
#   hack/dockerd.sh stop     stop it (SIGTERM, then wait for its containers and containerd to end)
#   hack/dockerd.sh env      print `export DOCKER_HOST=...` for eval
#   hack/dockerd.sh status   say whether it runs
#
# It changes nothing of the host's own Docker: its own socket, pid file and exec root under
# $NUV_DOCKERD_RUN (default /run/nuv-test-docker), its own daemon.json there (the host's
# /etc/docker/daemon.json is not read), its images under the user's cache ($NUV_DOCKERD_DATA,
# default ${NUV_CACHE_DIR:-~/.cache/nuv}/dockerd, kept between runs), no default bridge (--bridge=none;
# kind makes its own network), no iptables rules and no ip_forward sysctl on the host (only the inotify
# limits are raised while it runs: see raise_inotify). Containers run
# through bin/nuv-runc, which removes the capabilities this host's bounding set lacks (this VM lacks
# CAP_SYS_RESOURCE, which privileged containers such as kind's nodes ask for); it says so below.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
run=${NUV_DOCKERD_RUN:-/run/nuv-test-docker}
cache=${NUV_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nuv}
data=${NUV_DOCKERD_DATA:-$cache/dockerd}
sock=$run/docker.sock
pidfile=$run/dockerd.pid
log=$run/dockerd.log

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

install() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "dockerd.sh: missing packages: ${missing[*]} (install them with apt-get, as root)" >&2
    exit 1
  fi
  echo "dockerd.sh: installing ${missing[*]} (apt)" >&2
  apt-get update -qq
  # policy-rc.d or not, the packages' own services are not wanted: this script runs the daemon
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if command -v systemctl >/dev/null && systemctl is-active --quiet docker 2>/dev/null; then
    echo "dockerd.sh: note: the package started the system's docker service; nuv's daemon runs beside it" >&2
  fi
}

# Every node container (kind's, the AWS emulator's machines) runs systemd, containerd and a
# kubelet, and a control plane its API server and controller manager: about 13 inotify instances a
# worker and 26 a control plane, all counted against root's fs.inotify.max_user_instances (128 on
# Debian). A three-control-plane cluster beside another test's cluster passes it, and the next
# kubelet fails to start ("too many open files") until kubeadm gives up. As kind's documentation
# advises, raise the limits while the daemon runs (stop puts back what start found).
inotify_limits=(fs.inotify.max_user_instances=1024 fs.inotify.max_user_watches=524288)
raise_inotify() {
  local kv key want have
  for kv in "${inotify_limits[@]}"; do
    key=${kv%%=*} want=${kv#*=}
    have=$(sysctl -n "$key")
    if [ "$have" -lt "$want" ]; then
      [ -f "$run/$key.before" ] || echo "$have" >"$run/$key.before"
      sysctl -q -w "$key=$want"
      echo "dockerd.sh: $key $have -> $want (node containers' kubelets; put back by stop)" >&2
    fi
  done
}
restore_inotify() {
  local kv key
  for kv in "${inotify_limits[@]}"; do
    key=${kv%%=*}
    if [ -f "$run/$key.before" ]; then
      sysctl -q -w "$key=$(cat "$run/$key.before")"
      echo "dockerd.sh: $key back to $(cat "$run/$key.before")" >&2
      rm -f "$run/$key.before"
    fi
  done
}

start() {
  mkdir -p "$run"
  if [ "$(id -u)" = 0 ]; then raise_inotify; fi
  if running && DOCKER_HOST=unix://$sock docker version >/dev/null 2>&1; then
    echo "dockerd.sh: running (pid $(cat "$pidfile")): DOCKER_HOST=unix://$sock" >&2
    return 0
  fi
  install
  if [ "$(id -u)" != 0 ]; then
    echo "dockerd.sh: dockerd needs root" >&2
    exit 1
  fi
  mkdir -p "$repo/bin" "$run" "$data"
  go build -o "$repo/bin/nuv-runc" ./hack/nuv-runc
  local lacks
  lacks=$("$repo/bin/nuv-runc" --nuv-missing-caps)
  # dns-opts: this daemon's containers have no route out (no NAT), so a name Docker's embedded DNS
  # forwards upstream can only time out; one try of 1 s instead of glibc's 2 x 5 s. kind's node
  # entrypoint looks up host.docker.internal (under `timeout 5`) on every boot: 5 s -> 1 s a node.
  cat >"$run/daemon.json" <<JSON
{
  "runtimes": {"nuv-runc": {"path": "$repo/bin/nuv-runc"}},
  "default-runtime": "nuv-runc",
  "storage-driver": "overlay2",
  "dns-opts": ["timeout:1", "attempts:1"]
}
JSON
  if [ -n "$lacks" ]; then
    echo "dockerd.sh: this host lacks $lacks: containers run through bin/nuv-runc, which removes it from their specs before runc (log: $run/nuv-runc.log)" >&2
  fi
  # A daemon that died leaves its pid files behind; dockerd refuses to start over them.
  rm -f "$pidfile" "$sock" "$run/exec/containerd/containerd.pid"
  echo "dockerd.sh: starting dockerd (data root $data, socket $sock, log $log)" >&2
  NUV_RUNC_LOG=$run/nuv-runc.log setsid dockerd \
    --config-file "$run/daemon.json" \
    --data-root "$data" --exec-root "$run/exec" --pidfile "$pidfile" \
    -H "unix://$sock" --bridge=none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
    >"$log" 2>&1 </dev/null &
  for _ in $(seq 1 120); do
    if DOCKER_HOST=unix://$sock docker version >/dev/null 2>&1; then
      echo "dockerd.sh: ready: DOCKER_HOST=unix://$sock" >&2
      return 0
    fi
    if ! kill -0 $! 2>/dev/null; then break; fi
    sleep 0.5
  done
  echo "dockerd.sh: dockerd did not answer on $sock; the end of $log:" >&2
  tail -20 "$log" >&2
  exit 1
}

stop() {
  if ! running; then
    echo "dockerd.sh: not running" >&2
    restore_inotify
    return 0
  fi
  local pid
  pid=$(cat "$pidfile")
  kill -TERM "$pid"
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || { echo "dockerd.sh: stopped" >&2; restore_inotify; return 0; }
    sleep 0.5
  done
  echo "dockerd.sh: dockerd (pid $pid) did not stop in 30 s: killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
  restore_inotify
}

case "${1:-}" in
start) start ;;
stop) stop ;;
env) echo "export DOCKER_HOST=unix://$sock" ;;
status) if running; then echo "running (pid $(cat "$pidfile")): unix://$sock"; else echo "not running"; exit 1; fi ;;
*) echo "usage: hack/dockerd.sh start|stop|env|status" >&2; exit 2 ;;
esac
