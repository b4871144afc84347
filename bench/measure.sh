# Shared by the benchmark scripts (sourced, not run): timing a command
# and printing its row, and Terraform ÷ strata.

# time DIR CMD... -> "wall cpu peak_MiB", the command's output discarded;
# a failing command aborts the run with its output.
measure() {
  local dir=$1
  shift
  local out rc
  out=$(cd "$dir" && /usr/bin/time -f '@@ %e %U %S %M' "$@" 2>&1) && rc=0 || rc=$?
  # plan --detailed-exitcode is not used: any non-zero exit is a failure.
  if [ "$rc" -ne 0 ]; then
    echo "FAILED ($rc) in $dir: $*" >&2
    echo "$out" | tail -n 30 >&2
    exit 1
  fi
  echo "$out" | grep -o '@@ .*' | tail -n 1 | awk '{printf "%.2f %.2f %.1f\n", $2, $3 + $4, $5 / 1024}'
}

row() { printf '%-6s %-6s %-10s %-9s %9s %9s %10s\n' "$@"; }
ratio() {
  # shape N step, strata "w c m", terraform "w c m"
  read -r sw sc sm <<<"$4"
  read -r tw tc tm <<<"$5"
  printf '%-6s %-6s %-10s %-9s %8.1fx %8.1fx %9.1fx\n' "$1" "$2" "$3" "tf/strata" \
    "$(echo "$tw / $sw" | bc -l)" "$(echo "$tc / ($sc + 0.001)" | bc -l)" "$(echo "$tm / $sm" | bc -l)"
}

