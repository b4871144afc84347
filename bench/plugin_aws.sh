# Sourced by bench/plugin.sh, not run: the real AWS provider, where this
# machine has it in a filesystem mirror (Terraform's layout), against moto
# on 127.0.0.1, through both tools:
#   vpc       terraform-aws-vpc's `complete` example (v5.21.0, the last
#             for provider 5.x; its vpc_endpoints module off, as moto
#             serves no endpoint services): init, validate (strata's
#             first with no kept schema, then kept), plan, apply, and the
#             plan after the apply (every object read back; moto keeps a
#             few attributes the provider sets, so a few changes remain,
#             for both tools alike)
#   where     where the time of strata's plan goes (STRATA_TIMINGS)
#   aliases   N aliased AWS providers with one VPC each, N = 1, 5, 20,
#             served by the plugin in both tools (memory per provider
#             process: hashicorp/terraform#32744): the first plan, the
#             apply, and the plan after it (plan2, every VPC read back)
# Each row: wall and CPU seconds, the peak of the tool's and its
# plugins' memory together, and how many provider processes were started.
# strata keeps its package digests in a cache of the run's own
# (XDG_CACHE_HOME), empty at the start: the vpc init hashes the package
# as Terraform's does, the aliases' inits find its digest kept.
# The module is cloned for the run (VPC_MODULE_SOURCE, a git URL or
# directory; VPC_MODULE_REF) and never kept. Needs: release, work and
# have_tf from bench/plugin.sh; measure_tree from bench/measure.sh.

aws_mirror() {
  local d
  for d in "${AWS_PROVIDER_MIRROR:-}" /opt/tf-plugins "$HOME/.terraform.d/plugins" \
    "$HOME/.local/share/terraform/plugins" /usr/local/share/terraform/plugins \
    /usr/share/terraform/plugins; do
    [ -n "$d" ] && [ -d "$d/registry.terraform.io/hashicorp/aws" ] && { echo "$d"; return; }
  done
  return 0
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A moto of its own for each tool, on a free port (its pid kept in
# moto_pids, its address in the variable named $1): the example's names
# (IAM roles) are fixed, so one tool's apply would collide with the
# other's objects.
moto_start() {
  local port
  port=$(free_port)
  "$moto" -H 127.0.0.1 -p "$port" >"$aws/moto-$port.log" 2>&1 &
  moto_pids="$moto_pids $!"
  printf -v "$1" 'http://127.0.0.1:%s' "$port"
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/moto-api/" >/dev/null && return
    sleep 0.1
  done
  echo "moto did not start on $port" >&2
  exit 1
}

aws_row() { printf '%-8s %-12s %-9s %8s %8s %9s %7s\n' "$@"; }

aws_ratio() {
  read -r sw _ sm _ <<<"$3"
  read -r tw _ tm _ <<<"$4"
  printf '%-8s %-12s %-9s %7.1fx %8s %8.1fx\n' "$1" "$2" tf/strata \
    "$(echo "$tw / $sw" | bc -l)" "" "$(echo "$tm / $sm" | bc -l)"
}

# aws_steps SHAPE DIR_STRATA DIR_TERRAFORM STEP... : each step by both
# tools, strata's first, each against its own moto, then the ratio.
aws_steps() {
  local shape=$1 s=$2 t=$3 step
  shift 3
  for step in "$@"; do
    local sa ta
    case $step in
      init) sa=(init -no-color); ta=(init -input=false -no-color) ;;
      validate*) sa=(validate -no-color); ta=(validate -no-color) ;;
      plan*) sa=(plan -no-color -input=false); ta=(plan -no-color -input=false) ;;
      apply*) sa=(apply -auto-approve -no-color -input=false); ta=(apply -auto-approve -no-color -input=false) ;;
    esac
    local sr tr
    sr=$(measure_tree "$s" env AWS_ENDPOINT_URL="$strata_aws" "$release/strata" "${sa[@]}")
    aws_row "$shape" "$step" strata $sr
    $have_tf || continue
    tr=$(measure_tree "$t" env AWS_ENDPOINT_URL="$terraform_aws" terraform "${ta[@]}")
    aws_row "$shape" "$step" terraform $tr
    aws_ratio "$shape" "$step" "$sr" "$tr"
  done
}

# Where strata's plan spends: the time at the end of each stage and
# since the one before, from STRATA_TIMINGS.
aws_where() {
  (cd "$1" && AWS_ENDPOINT_URL="$strata_aws" STRATA_TIMINGS=1 \
    "$release/strata" plan -no-color -input=false 2>&1 >/dev/null) |
    sed -nE 's/^timings: (.*[^ ]) +([0-9.]+) s .*/\1|\2/p' |
    awk -F'|' '{ printf "where    %-16s %7.3f s  (+%.3f)\n", $1, $2, $2 - last; last = $2 }'
}

# N aliased providers, one VPC each. strata's copy pins the provider to
# its plugin (`strata = "plugin"`, which Terraform would refuse): it
# plans aws_vpc with its native driver otherwise, starting no process.
aliases_config() {
  local n=$1 tool=$2 i pin=""
  [ "$tool" = strata ] && pin=$'\n      strata = "plugin"'
  printf 'terraform {\n  required_providers {\n    aws = {\n      source = "hashicorp/aws"%s\n    }\n  }\n}\n' "$pin"
  for ((i = 1; i <= n; i++)); do
    printf 'provider "aws" {\n  alias  = "a%d"\n  region = "eu-west-1"\n}\n' "$i"
    printf 'resource "aws_vpc" "v%d" {\n  provider   = aws.a%d\n  cidr_block = "10.%d.0.0/16"\n}\n' "$i" "$i" "$i"
  done
}

aws_bench() {
  local mirror
  mirror=$(aws_mirror)
  moto=${STRATA_MOTO_SERVER:-$HOME/.cache/strata-venv/bin/moto_server}
  if [ -z "$mirror" ] || [ ! -x "$moto" ]; then
    echo "real AWS provider: skipped (mirror: ${mirror:-none found}, moto: $moto)"
    return
  fi
  aws="$work/aws"
  mkdir -p "$aws"
  if ! git clone -q --depth 1 --branch "${VPC_MODULE_REF:-v5.21.0}" \
    "${VPC_MODULE_SOURCE:-https://github.com/terraform-aws-modules/terraform-aws-vpc.git}" \
    "$aws/vpc-src" 2>/dev/null; then
    echo "real AWS provider: skipped (terraform-aws-vpc not reachable; set VPC_MODULE_SOURCE)"
    return
  fi
  moto_pids=""
  # Stopped with the run, whatever ends it.
  trap 'kill $moto_pids 2>/dev/null; rm -rf "$work"' EXIT
  moto_start strata_aws
  moto_start terraform_aws
  export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=eu-west-1 \
    AWS_EC2_METADATA_DISABLED=true
  printf 'provider_installation {\n  filesystem_mirror {\n    path = "%s"\n  }\n}\n' "$mirror" >"$aws/cli.tfrc"
  local TF_CLI_CONFIG_FILE="$aws/cli.tfrc" XDG_CACHE_HOME="$aws/cache"
  export TF_CLI_CONFIG_FILE XDG_CACHE_HOME
  echo
  echo "real AWS provider from $mirror; moto for strata at $strata_aws, for terraform at $terraform_aws"
  aws_row shape step tool wall_s cpu_s peak_MiB starts
  local tool
  for tool in strata terraform; do
    cp -r "$aws/vpc-src" "$aws/vpc-$tool"
    printf 'module "vpc_endpoints" {\n  create = false\n}\n' \
      >"$aws/vpc-$tool/examples/complete/bench_override.tf"
  done
  # Each tool's first init hashes the 700 MB package: read once before,
  # so that neither figure is the disk's (strata's, first, was 0.8x).
  find "$mirror/registry.terraform.io/hashicorp/aws" -type f -exec cat {} + >/dev/null
  aws_steps vpc "$aws/vpc-strata/examples/complete" "$aws/vpc-terraform/examples/complete" \
    init validate validate2 plan apply plan2
  aws_where "$aws/vpc-strata/examples/complete"
  local n
  for n in 1 5 20; do
    for tool in strata terraform; do
      mkdir -p "$aws/aliases-$n-$tool"
      aliases_config "$n" "$tool" >"$aws/aliases-$n-$tool/main.tf"
    done
    aws_steps "aliases" "$aws/aliases-$n-strata" "$aws/aliases-$n-terraform" init "plan-$n" \
      "apply-$n" "plan2-$n"
  done
}

aws_bench
