#!/usr/bin/env bash
# Benchmark, not a test: N resources served by a provider plugin
# (terraform-provider-stratatest, release build), planned and applied by
# strata and by terraform through the same provider binary, in one run.
# For each N it times, for both tools:
#   plan      plan on empty state
#   apply     apply (terraform only up to TF_APPLY_MAX resources; above
#             that its later steps run on the state strata's apply wrote)
#   noop      plan with nothing to do: every object read back
#   norefresh the same without refresh
# and prints wall time, CPU time and peak memory per tool, and
# terraform ÷ strata. The provider keeps objects as files, so the figures
# are the tools' and the protocol's, not a cloud's.
#
# Then, where this machine has the real AWS provider, bench/plugin_aws.sh
# (its own header says what it runs).
#
# Usage: [TF_APPLY_MAX=1000] [PLUGIN_BENCH=all|test-provider|aws] bench/plugin.sh [N ...]
#        (default N: 1000; PLUGIN_BENCH: all)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000)
apply_max=${TF_APPLY_MAX:-1000}

cargo build --release --quiet -p strata -p strata-test-provider
release="${CARGO_TARGET_DIR:-target}/release"
case "$release" in /*) ;; *) release="$PWD/$release" ;; esac
have_tf=false
if command -v terraform >/dev/null 2>&1; then
  have_tf=true
  echo "terraform: $(TF_CLI_CONFIG_FILE=/dev/null terraform version | head -n 1)"
else
  echo "terraform not installed: strata's figures only"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
package="$work/mirror/registry.strata.test/strata/stratatest/0.1.0/linux_amd64"
mkdir -p "$package"
cp "$release/terraform-provider-stratatest" "$package/terraform-provider-stratatest_v0.1.0"
cat >"$work/cli.tfrc" <<CONF
provider_installation {
  filesystem_mirror {
    path    = "$work/mirror"
    include = ["registry.strata.test/*/*"]
  }
}
CONF
export TF_CLI_CONFIG_FILE="$work/cli.tfrc" TF_IN_AUTOMATION=1 NO_COLOR=1 CHECKPOINT_DISABLE=1

# measure, row and ratio: bench/measure.sh.
. bench/measure.sh

which=${PLUGIN_BENCH:-all}
[ "$which" = aws ] && sizes=()
[ ${#sizes[@]} -eq 0 ] || printf '%-6s %-6s %-10s %-9s %9s %9s %10s\n' shape N step tool wall_s cpu_s peak_MiB
for n in "${sizes[@]}"; do
  for tool in strata terraform; do
    d="$work/$n/$tool"
    mkdir -p "$d/store"
    cat >"$d/main.tf" <<TF
terraform {
  required_providers {
    stratatest = {
      source  = "registry.strata.test/strata/stratatest"
      version = "0.1.0"
    }
  }
}

provider "stratatest" {
  store = "./store"
}

variable "team" {
  default = "gpu"
}

resource "stratatest_object" "o" {
  count  = $n
  name   = "o-\${count.index}"
  labels = { team = var.team, index = tostring(count.index) }
  size   = count.index % 7
  ports  = [{ name = "http", number = 80 }]
  spec {
    image = "nginx"
  }
}
TF
  done
  s="$work/$n/strata"
  t="$work/$n/terraform"
  (cd "$s" && "$release/strata" init >/dev/null)
  if $have_tf; then
    (cd "$t" && terraform init -input=false -no-color >/dev/null)
  fi
  for step in plan apply noop norefresh; do
    case $step in
      plan | noop) sa=(plan); ta=(plan -input=false -no-color) ;;
      apply) sa=(apply --auto-approve); ta=(apply -input=false -no-color -auto-approve) ;;
      norefresh) sa=(plan --no-refresh); ta=(plan -input=false -no-color -refresh=false) ;;
    esac
    sr=$(measure "$s" "$release/strata" "${sa[@]}")
    row plugin "$n" "$step" strata $sr
    $have_tf || continue
    if [ "$step" = apply ] && [ "$n" -gt "$apply_max" ]; then
      row plugin "$n" "$step" terraform "skipped" "(over" "TF_APPLY_MAX)"
      cp "$s/terraform.tfstate" "$t/terraform.tfstate"
      cp "$s"/store/* "$t/store/"
      continue
    fi
    tr=$(measure "$t" terraform "${ta[@]}")
    row plugin "$n" "$step" terraform $tr
    ratio plugin "$n" "$step" "$sr" "$tr"
  done
  # The figures count only if the work was done: N objects in each
  # provider store, and each tool's state needing nothing more.
  for d in "$s" "$t"; do
    $have_tf || [ "$d" = "$s" ] || continue
    made=$(find "$d/store" -type f | wc -l)
    [ "$made" -eq "$n" ] || { echo "FAILED: $made objects in $d/store, not $n" >&2; exit 1; }
  done
  (cd "$s" && "$release/strata" plan --detailed-exitcode >/dev/null) ||
    { echo "FAILED: strata plans changes after its apply" >&2; exit 1; }
done

if [ "$which" != test-provider ]; then
  . bench/plugin_aws.sh
fi
