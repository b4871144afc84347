#!/usr/bin/env bash
# Benchmark, not a test: the engine against Terraform on the same generated
# files, in the same run. For each shape and size it times, for strata
# (release build) and terraform:
#   plan      plan on empty state
#   apply     apply (terraform only up to TF_APPLY_MAX resources: it
#             rewrites the whole state after every resource, so 10 000
#             take hours; above that, terraform's later steps run on the
#             state strata's apply wrote, which is Terraform's format)
#   noop      plan with nothing to do
#   norefresh the same without refresh
#   change    plan after changing the tree's root (every resource below it
#             changes through the references; the wide shape changes one
#             variable all instances read)
# and prints wall time (the median of five runs for a step done in under
# a second), CPU time (user + system) and peak memory per tool,
# and terraform ÷ strata. Then, per shape, how strata's time and memory
# grow from each size to the next beside the growth of N (linear: the
# three alike), and whether the issues' bars are met: no-change plan at
# 10 000 at least 100x faster in at most 1/10 of Terraform's memory,
# apply at 500 at least 150x faster.
#
# Usage: [SHAPES="tree wide"] [TF_APPLY_MAX=1000] [TF_MAX=20000]
#        [STRATA=path/to/strata] bench/engine.sh [N ...]
#        (default N: 1000 10000; Terraform is not run above TF_MAX: a
#        100 000-resource plan takes it the better part of an hour;
#        STRATA skips the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000)
shapes=${SHAPES:-tree wide}
apply_max=${TF_APPLY_MAX:-1000}
tf_max=${TF_MAX:-20000}

if [ -n "${STRATA:-}" ]; then
  strata=$STRATA
else
  cargo build --release --quiet
  strata="${CARGO_TARGET_DIR:-target}/release/strata"
fi
# An absolute CARGO_TARGET_DIR (as .ci/run sets) stays as it is.
case "$strata" in /*) ;; *) strata="$PWD/$strata" ;; esac
have_tf=false
if command -v terraform >/dev/null 2>&1; then
  have_tf=true
  echo "terraform: $(TF_CLI_CONFIG_FILE=/dev/null terraform version | head -n 1)"
else
  echo "terraform not installed: strata's figures only"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TF_CLI_CONFIG_FILE=/dev/null TF_IN_AUTOMATION=1 NO_COLOR=1 CHECKPOINT_DISABLE=1

# measure, row and ratio: bench/measure.sh.
. bench/measure.sh
declare -A ours theirs

printf '%-6s %-6s %-10s %-9s %9s %9s %10s\n' shape N step tool wall_s cpu_s peak_MiB

for shape in $shapes; do
  for n in "${sizes[@]}"; do
    s="$work/$shape-$n/strata"
    t="$work/$shape-$n/terraform"
    python3 bench/gen.py "$n" "$s" --shape "$shape"
    mkdir -p "$t" && cp "$s"/*.tf "$t"/
    if $have_tf; then
      (cd "$t" && terraform init -input=false -no-color >/dev/null)
    fi
    change=(-var "root=changed")
    [ "$shape" = wide ] && change=(-var 'tags={team="ml-platform",env="changed"}')
    for step in plan apply noop norefresh change; do
      case $step in
        plan) sa=(plan); ta=(plan -input=false -no-color) ;;
        apply) sa=(apply --auto-approve); ta=(apply -input=false -no-color -auto-approve) ;;
        noop) sa=(plan); ta=(plan -input=false -no-color) ;;
        norefresh) sa=(plan --no-refresh); ta=(plan -input=false -no-color -refresh=false) ;;
        change) sa=(plan --var "${change[1]}"); ta=(plan -input=false -no-color "${change[@]}") ;;
      esac
      # A repeated apply starts again from no state.
      reset=:
      [ "$step" = apply ] && reset='rm -f terraform.tfstate terraform.tfstate.backup'
      sr=$(measure_median "$s" "$reset" "$strata" "${sa[@]}")
      row "$shape" "$n" "$step" strata $sr
      ours["$shape $n $step"]=$sr
      $have_tf || continue
      if [ "$n" -gt "$tf_max" ]; then
        row "$shape" "$n" "$step" terraform "skipped" "(over" "TF_MAX)"
        continue
      fi
      if [ "$step" = apply ] && [ "$n" -gt "$apply_max" ]; then
        row "$shape" "$n" "$step" terraform "skipped" "(over" "TF_APPLY_MAX)"
        cp "$s/terraform.tfstate" "$t/terraform.tfstate"
        continue
      fi
      tr=$(measure_median "$t" "$reset" terraform "${ta[@]}")
      row "$shape" "$n" "$step" terraform $tr
      ratio "$shape" "$n" "$step" "$sr" "$tr"
      theirs["$shape $n $step"]=$tr
    done
    # A large tree's files and states are gigabytes: gone once measured.
    rm -rf "${work:?}/$shape-$n"
  done
done

# strata's growth from each size to the next: time and memory beside N.
echo
printf '%-6s %-14s %-10s %8s %8s %8s\n' shape sizes step N_x time_x memory_x
for shape in $shapes; do
  mapfile -t sorted < <(printf '%s\n' "${sizes[@]}" | sort -n -u)
  for ((i = 1; i < ${#sorted[@]}; i++)); do
    a=${sorted[i - 1]} b=${sorted[i]}
    for step in plan apply noop norefresh change; do
      read -r aw _ am <<<"${ours["$shape $a $step"]}"
      read -r bw _ bm <<<"${ours["$shape $b $step"]}"
      printf '%-6s %-14s %-10s %7.1fx %7.1fx %7.1fx\n' "$shape" "$a->$b" "$step" \
        "$(echo "$b / $a" | bc -l)" "$(echo "$bw / ($aw + 0.005)" | bc -l)" "$(echo "$bm / $am" | bc -l)"
    done
  done
done

# The bars, where this run measured both tools at their sizes.
bar() {
  # shape N step min_time_x min_memory_x
  local key="$1 $2 $3" sw sm tw tm
  [ -n "${theirs[$key]:-}" ] || return 0
  read -r sw _ sm <<<"${ours[$key]}"
  read -r tw _ tm <<<"${theirs[$key]}"
  local tx mx verdict=met
  tx=$(echo "$tw / $sw" | bc -l)
  mx=$(echo "$tm / $sm" | bc -l)
  if [ "$(echo "$tx < $4" | bc -l)" = 1 ] || [ "$(echo "$mx < $5" | bc -l)" = 1 ]; then
    verdict="NOT met"
  fi
  printf 'bar: %-6s %-6s %-8s time %6.1fx (>= %sx), memory %5.1fx (>= %sx): %s\n' \
    "$1" "$2" "$3" "$tx" "$4" "$mx" "$5" "$verdict"
}
echo
for shape in $shapes; do
  bar "$shape" 10000 noop 100 10
  bar "$shape" 500 apply 150 0
done
