//! The fuzz targets' kept corpus (`fuzz/corpus/<target>/`, minimized after
//! each long run) and every input that ever crashed a target
//! (`fuzz/regressions/<target>/`), replayed through the targets' own code
//! (`fuzz/fuzz_targets/bodies.rs`) in the ordinary test suite, so a fixed
//! crash stays fixed without libFuzzer.

#[path = "../fuzz/fuzz_targets/bodies.rs"]
mod bodies;

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut inputs = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        for e in entries.flatten() {
            let data = std::fs::read(e.path()).expect("a corpus file");
            let outcome = std::panic::catch_unwind(|| run(&data));
            assert!(
                outcome.is_ok(),
                "{target}: {} panics (fuzz/{dir}/{target})",
                e.path().display()
            );
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
    replay("load_eval", bodies::load_eval);
}

#[test]
fn state_decode_corpus() {
    replay("state_decode", bodies::state_decode);
}

#[test]
fn plan_file_corpus() {
    replay("plan_file", bodies::plan_file);
}
