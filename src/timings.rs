//! `STRATA_TIMINGS=1`: one line on stderr as each stage of a command ends,
//! with the time since the first and the memory in use and at its peak,
//! for finding where a slow or large run spends (the benchmark's figures
//! say how much; this says where).

use std::sync::OnceLock;
use std::time::Instant;

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("STRATA_TIMINGS").is_some_and(|v| v != "0"))
}

/// Marks the end of `stage`. Written straight to stderr, from wherever a
/// stage ends: a developer's tool, off unless asked for, and no part of
/// any command's output.
#[allow(clippy::print_stderr)]
pub fn stage(stage: &str) {
    if !enabled() {
        return;
    }
    static START: OnceLock<Instant> = OnceLock::new();
    let secs = START.get_or_init(Instant::now).elapsed().as_secs_f64();
    // Linux reports resident memory in /proc; elsewhere only time is shown.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mib = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or_else(|| "?".to_string(), |kb| (kb / 1024).to_string())
    };
    eprintln!(
        "timings: {stage:<14} {secs:>8.3} s   memory {:>6} MiB   peak {:>6} MiB",
        mib("VmRSS:"),
        mib("VmHWM:")
    );
}
