# Stages of nuv's test command; hack/test.sh sources this file (bash).
#
# A stage is a named command run with its output in a log of its own ($STAGE_DIR/NAME.log). When
# it ends it prints one line: its wall time and its CPU time (user+sys of the processes it waited
# for, from bash's `time`; a daemon it started is not in it), and whether it built or took its
# cache where its output says so; a stage that fails prints its log, named. Each record is
# appended to $STAGE_DIR/stages.tsv (NAME WALL USER SYS EXIT CACHE, tab-separated), which
# hack/testsummary lists in the report and hack/testbudget writes into budget.json.
#
# Stages run in the foreground (stage_run) or in the background (stage_start, then stage_wait):
# each background stage is a process group of its own (set -m), so stage_stop_all can end one still
# running when the run stops early.
#
# STAGE_DIR must be set before a stage runs.

declare -A stage_pids=() stage_began=()

# stage_run NAME BUILT CACHED CMD...: runs CMD as the stage NAME. BUILT and CACHED are extended
# regular expressions (or "") matched against the stage's log: a match of BUILT records the stage
# as built, else a match of CACHED as cached, else neither is known. CMD may be a shell function;
# it runs in a subshell with errexit on, so a failing command inside it fails the stage. Returns
# CMD's exit status.
stage_run() {
  local name=$1 built=$2 cached=$3
  shift 3
  local log="$STAGE_DIR/$name.log" times="$STAGE_DIR/.$name.time" rc=0 cache=""
  mkdir -p "$STAGE_DIR"
  printf '== %s: started (%ds)\n' "$name" "$SECONDS"
  # errexit is off around the subshell: in a context that tests a status (`|| rc=$?`) bash would
  # ignore the subshell's own `set -e`
  local errexit=false
  case $- in *e*) errexit=true ;; esac
  set +e
  { TIMEFORMAT='%3R %3U %3S'; time { (set -e; "$@") >"$log" 2>&1 </dev/null; }; } 2>"$times"
  rc=$?
  if $errexit; then set -e; fi
  local wall user sys
  # the last line is time's; bash may have said before it how a command ended ("Terminated")
  read -r wall user sys < <(awk 'NF == 3 && $1 ~ /^[0-9.]+$/ { t = $0 } END { print (t == "" ? "0 0 0" : t) }' "$times")
  rm -f "$times"
  if [ -n "$built" ] && grep -Eq -- "$built" "$log"; then
    cache=built
  elif [ -n "$cached" ] && grep -Eq -- "$cached" "$log"; then
    cache=cached
  fi
  printf '%s\t%s\t%s\t%s\t%d\t%s\n' "$name" "$wall" "$user" "$sys" "$rc" "$cache" >>"$STAGE_DIR/stages.tsv"
  local cpu
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
  if ${stage_stopped:-false}; then
    printf '== %s: stopped after %.1fs, %ss CPU (log: %s)\n' "$name" "$wall" "$cpu" "$log" >&2
    return "$rc"
  fi
  if [ "$rc" -ne 0 ]; then
    printf '== %s: FAILED (exit %d) after %.1fs, %ss CPU; its output (%s):\n' "$name" "$rc" "$wall" "$cpu" "$log" >&2
    sed 's/^/  | /' "$log" >&2
    printf '== %s: FAILED (exit %d)\n' "$name" "$rc" >&2
    return "$rc"
  fi
  printf '== %s: done in %.1fs, %ss CPU%s (log: %s)\n' "$name" "$wall" "$cpu" "${cache:+, $cache}" "$log"
}

# stage_start NAME BUILT CACHED CMD...: stage_run in the background, in a process group of its own.
# Stopped (stage_stop_all), it still records itself, as failed.
stage_start() {
  local name=$1
  stage_began[$name]=$EPOCHREALTIME
  set -m
  (
    stage_stopped=false
    trap 'stage_stopped=true' TERM
    stage_run "$@"
  ) &
  stage_pids[$name]=$!
  set +m
}

# stage_wait NAME...: waits for background stages; when any failed, names them and returns 1 (after
# all of them ended: a failed stage's log is printed once and the others are not cut short).
stage_wait() {
  local failed=() name
  for name in "$@"; do
    if ! wait "${stage_pids[$name]}"; then
      failed+=("$name")
    fi
    unset "stage_pids[$name]"
  done
  if [ ${#failed[@]} -gt 0 ]; then
    printf '== setup failed: %s\n' "${failed[*]}" >&2
    return 1
  fi
}

# stage_stop_all: ends every background stage still running (its whole process group), for a run
# that stops early; each says it was stopped and records itself.
stage_stop_all() {
  local name pid
  for name in "${!stage_pids[@]}"; do
    pid=${stage_pids[$name]}
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM -- "-$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      if ! cut -f1 "$STAGE_DIR/stages.tsv" 2>/dev/null | grep -qxF -- "$name"; then
        # stopped before its trap was set: recorded here, its CPU time unknown (0)
        printf '== %s: stopped\n' "$name" >&2
        printf '%s\t%s\t0\t0\t143\t\n' "$name" "$(awk -v a="${stage_began[$name]}" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')" >>"$STAGE_DIR/stages.tsv"
      fi
    fi
  done
  stage_pids=()
}

# stage_check: fails (naming them) when stages that ended so far failed, so that a run whose
# background stage already failed starts nothing more.
stage_check() {
  local failed
  failed=$(awk -F'\t' '$5 != 0 { printf "%s%s", sep, $1; sep = ", " }' "$STAGE_DIR/stages.tsv" 2>/dev/null)
  if [ -n "$failed" ]; then
    printf '== setup failed: %s\n' "$failed" >&2
    return 1
  fi
}
