#!/usr/bin/env bash
# Benchmark, not a test: load + evaluate a generated configuration of N
# resources with `strata validate` (release build), and `terraform validate`
# on the same files in the same run when terraform is installed.
# Prints wall time, CPU time and peak memory for each, and the ratio.
#
# Usage: [FILES=k] bench/load_eval.sh [N ...]   (default: 1000 10000, in 10 files)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000)

cargo build --release --quiet
strata="${CARGO_TARGET_DIR:-target}/release/strata"
# An absolute CARGO_TARGET_DIR (as .ci/run sets) stays as it is.
case "$strata" in /*) ;; *) strata="$PWD/$strata" ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT


printf '%-8s %-10s %10s %10s %12s\n' N tool wall_s cpu_s peak_MiB
for n in "${sizes[@]}"; do
  dir="$work/n$n"
  python3 bench/gen.py "$n" "$dir" --files "${FILES:-10}"
  read -r sw su ss sm < <(cd "$dir" && /usr/bin/time -f '%e %U %S %M' "$strata" validate . 2>&1 >/dev/null | tail -n 1)
  printf '%-8s %-10s %10.2f %10.2f %12.1f\n' "$n" strata "$sw" "$(echo "$su + $ss" | bc)" "$(echo "$sm / 1024" | bc -l)"
  if command -v terraform >/dev/null 2>&1; then
    read -r tw tu ts tm < <(cd "$dir" && TF_CLI_CONFIG_FILE=/dev/null /usr/bin/time -f '%e %U %S %M' terraform validate -no-color 2>&1 >/dev/null | tail -n 1)
    printf '%-8s %-10s %10.2f %10.2f %12.1f\n' "$n" terraform "$tw" "$(echo "$tu + $ts" | bc)" "$(echo "$tm / 1024" | bc -l)"
    printf '%-8s %-10s %10.1fx %21.1fx\n' "$n" "ratio" "$(echo "$tw / $sw" | bc -l)" "$(echo "$tm / $sm" | bc -l)"
  else
    echo "terraform not installed: no comparison"
  fi
done
