# Shared by the benchmark scripts (sourced, not run): timing a command
# and printing its row, and Terraform ÷ strata.

# time DIR CMD... -> "wall cpu peak_MiB", the command's output discarded;
# a failing command aborts the run with its output. The wall time is read
# from the clock in milliseconds (time's %e has two decimals: a 35 ms run
# read as 0.03 or 0.04 s moves a ratio by a seventh either way).
measure() {
  local dir=$1
  shift
  local out rc t0 t1
  t0=$(date +%s%N)
  out=$(cd "$dir" && /usr/bin/time -f '@@ %e %U %S %M' "$@" 2>&1) && rc=0 || rc=$?
  t1=$(date +%s%N)
  # plan --detailed-exitcode is not used: any non-zero exit is a failure.
  if [ "$rc" -ne 0 ]; then
    echo "FAILED ($rc) in $dir: $*" >&2
    echo "$out" | tail -n 30 >&2
    exit 1
  fi
  echo "$out" | grep -o '@@ .*' | tail -n 1 |
    awk -v ns=$((t1 - t0)) '{printf "%.3f %.2f %.1f\n", ns / 1e9, $3 + $4, $5 / 1024}'
}

# measure_median DIR RESET CMD... -> like measure, but a command done in
# under a second runs five times (RESET, a shell command, run in DIR before
# each repeat: an apply's state removed) and the median run's wall and CPU
# time are kept, with the largest peak: one run of a few tens of
# milliseconds is as noisy as the machine.
measure_median() {
  local dir=$1 reset=$2
  shift 2
  local first
  first=$(measure "$dir" "$@")
  if [ "$(echo "${first%% *} >= 1" | bc -l)" = 1 ]; then
    echo "$first"
    return
  fi
  local runs=("$first") i
  for i in 2 3 4 5; do
    (cd "$dir" && eval "$reset")
    runs+=("$(measure "$dir" "$@")")
  done
  local peak
  peak=$(printf '%s\n' "${runs[@]}" | awk '$3 > m { m = $3 } END { printf "%.1f", m }')
  printf '%s\n' "${runs[@]}" | sort -n | sed -n 3p | awk -v peak="$peak" '{print $1, $2, peak}'
}

row() { printf '%-6s %-6s %-10s %-9s %9s %9s %10s\n' "$@"; }
ratio() {
  # shape N step, strata "w c m", terraform "w c m"
  read -r sw sc sm <<<"$4"
  read -r tw tc tm <<<"$5"
  printf '%-6s %-6s %-10s %-9s %8.1fx %8.1fx %9.1fx\n' "$1" "$2" "$3" "tf/strata" \
    "$(echo "$tw / $sw" | bc -l)" "$(echo "$tc / ($sc + 0.001)" | bc -l)" "$(echo "$tm / $sm" | bc -l)"
}


# measure_tree DIR CMD... -> "wall cpu peak_MiB starts": like measure,
# but the peak is the largest sum of the resident memory of the command
# and every process under it (a tool and its provider plugins), sampled
# every 50 ms, and starts counts the provider processes seen (a process
# living less than a sample may be missed).
measure_tree() {
  local dir=$1
  shift
  local t
  t=$(mktemp -d)
  (cd "$dir" && exec /usr/bin/time -f '@@ %e %U %S' -o "$t/time" "$@" >"$t/out" 2>&1) &
  local pid=$! peak=0 starts=""
  while kill -0 "$pid" 2>/dev/null; do
    read -r kb seen < <(ps -e -o pid=,ppid=,rss=,comm= | awk -v root="$pid" '
      { parent[$1] = $2; rss[$1] = $3; comm[$1] = $4 }
      END {
        for (p in parent) {
          q = p
          while (q != "" && q != root && q > 1) q = parent[q]
          if (q == root) {
            total += rss[p]
            if (comm[p] ~ /^terraform-prov/) plugins = plugins " " p
          }
        }
        printf "%d %s\n", total, plugins
      }')
    [ "${kb:-0}" -gt "$peak" ] && peak=$kb
    starts="$starts $seen"
    sleep 0.05
  done
  local rc=0
  wait "$pid" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAILED ($rc) in $dir: $*" >&2
    tail -n 30 "$t/out" >&2
    rm -rf "$t"
    exit 1
  fi
  local n
  n=$(echo "$starts" | tr ' ' '\n' | grep . | sort -u | wc -l)
  grep -o '@@ .*' "$t/time" | tail -n 1 |
    awk -v peak="$peak" -v n="$n" '{printf "%.2f %.2f %.1f %d\n", $2, $3 + $4, peak / 1024, n}'
  rm -rf "$t"
}
