#!/usr/bin/env bash
# The crash harness at a larger scale than CI runs it: N trials (default
# 100) of the 60-object AWS stack applied and destroyed by a strata killed
# with SIGKILL at a random moment, each checked against moto through the
# AWS SDK (tests/crash_aws.rs); then the state backends' crash trials
# (state/src/conformance.rs) at N each. Needs moto (STRATA_MOTO_SERVER)
# and PostgreSQL (STRATA_PG_CONN), as ./.ci/run sets them up.
#   bench/crash.sh [N] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-100}"
export STRATA_CRASH_TRIALS="$n" STRATA_CONFORMANCE_TRIALS="$n"
if [ -n "${2:-}" ]; then export STRATA_CRASH_SEED="$2" STRATA_CONFORMANCE_SEED="$2"; fi
export NO_COLOR=1 AWS_EC2_METADATA_DISABLED=true
cargo test --test crash_aws --test state_backends -- --nocapture --test-threads=1 \
  kill_9 conformance_ 2>&1 | grep -E "harness|crash trials|uninterrupted|^test |panicked|seed"
