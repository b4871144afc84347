//! The fuzz targets' kept corpus (`fuzz/corpus/<target>/`, minimized after
//! each long run) and every input that ever crashed a target
//! (`fuzz/regressions/<target>/`), replayed through the targets' own code
//! (`fuzz/fuzz_targets/bodies.rs`) in the ordinary test suite, so a fixed
//! crash stays fixed without libFuzzer.

#[path = "../fuzz/fuzz_targets/bodies.rs"]
mod bodies;

use std::path::Path;

/// Replays the target's corpus, its regressions and `seeds` (folders of
/// the repository a fuzz run starts from, as README's command gives them).
fn replay(target: &str, run: fn(&[u8]), seeds: &[&str]) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs: Vec<_> = ["corpus", "regressions"]
        .iter()
        .map(|d| repo.join("fuzz").join(d).join(target))
        .collect();
    dirs.extend(seeds.iter().map(|s| repo.join(s)));
    let mut inputs = 0;
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten().filter(|e| e.path().is_file()) {
            let data = std::fs::read(e.path()).expect("a corpus file");
            let outcome = std::panic::catch_unwind(|| run(&data));
            assert!(outcome.is_ok(), "{target}: {} panics", e.path().display());
            inputs += 1;
        }
    }
    assert!(
        inputs > 0,
        "fuzz/corpus/{target} is empty: nothing was replayed"
    );
    eprintln!("{target}: {inputs} inputs replayed");
}

#[test]
fn load_eval_corpus() {
    replay(
        "load_eval",
        bodies::load_eval,
        &[
            "tests/fmt",
            "examples/multi-cloud",
            "examples/single-cloud",
            "tests/engine/json/1",
            "tests/engine/json/2",
        ],
    );
}

#[test]
fn state_decode_corpus() {
    replay("state_decode", bodies::state_decode, &[]);
}

#[test]
fn plan_file_corpus() {
    replay("plan_file", bodies::plan_file, &[]);
}
