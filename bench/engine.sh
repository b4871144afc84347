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
# and prints wall time, CPU time (user + system) and peak memory per tool,
# and terraform ÷ strata.
#
# Usage: [SHAPES="tree wide"] [TF_APPLY_MAX=1000] bench/engine.sh [N ...]
#        (default N: 1000 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000)
shapes=${SHAPES:-tree wide}
apply_max=${TF_APPLY_MAX:-1000}

cargo build --release --quiet
strata="${CARGO_TARGET_DIR:-target}/release/strata"
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
      sr=$(measure "$s" "$strata" "${sa[@]}")
      row "$shape" "$n" "$step" strata $sr
      $have_tf || continue
      if [ "$step" = apply ] && [ "$n" -gt "$apply_max" ]; then
        row "$shape" "$n" "$step" terraform "skipped" "(over" "TF_APPLY_MAX)"
        cp "$s/terraform.tfstate" "$t/terraform.tfstate"
        continue
      fi
      tr=$(measure "$t" terraform "${ta[@]}")
      row "$shape" "$n" "$step" terraform $tr
      ratio "$shape" "$n" "$step" "$sr" "$tr"
    done
  done
done
