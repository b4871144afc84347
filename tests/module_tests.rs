//! The project's own modules run their `tests/` folders with `strata
//! test` (their providers mocked): a module's CI is the first user of the
//! test command. Each module with a `tests/` folder, in a copy of
//! `modules/`, must succeed.

#[path = "common/run.rs"]
mod run;

use std::path::Path;

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    for e in std::fs::read_dir(from).expect("read").flatten() {
        let target = to.join(e.file_name());
        match e.path().is_dir() {
            true => copy(&e.path(), &target),
            false => {
                std::fs::copy(e.path(), target).expect("copy");
            }
        }
    }
}

#[test]
fn every_module_with_tests_passes_them() {
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("modules");
    let dir = std::env::temp_dir().join(format!("strata-module-tests-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy(&modules, &dir);
    let mut tested = Vec::new();
    for e in std::fs::read_dir(&dir).expect("modules").flatten() {
        if !e.path().join("tests").is_dir() {
            continue;
        }
        let (code, out) = run::strata_in(&e.path(), &["test"]);
        assert_eq!(code, 0, "{}:\n{out}", e.path().display());
        assert!(out.contains("Success!"), "{out}");
        tested.push(e.file_name().to_string_lossy().to_string());
    }
    tested.sort();
    for m in [
        "aws",
        "azure",
        "gcp",
        "gpu-operator",
        "kubernetes",
        "runtime",
    ] {
        assert!(
            tested.contains(&m.to_string()),
            "{m} has no tests: {tested:?}"
        );
    }
}
