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

/// Runs `strata test` in a copy of each folder under `folder` (of the
/// project) that has a `tests/` folder; each must succeed. Their names.
fn each_with_tests_passes(folder: &str) -> Vec<String> {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let dir = std::env::temp_dir().join(format!("strata-{folder}-tests-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy(&from, &dir);
    let mut tested = Vec::new();
    for e in std::fs::read_dir(&dir).expect("folder").flatten() {
        if !e.path().join("tests").is_dir() {
            continue;
        }
        let (code, out) = run::strata_in(&e.path(), &["test"]);
        assert_eq!(code, 0, "{}:\n{out}", e.path().display());
        assert!(out.contains("Success!"), "{out}");
        tested.push(e.file_name().to_string_lossy().to_string());
    }
    tested.sort();
    tested
}

#[test]
fn every_module_with_tests_passes_them() {
    let tested = each_with_tests_passes("modules");
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

/// The examples with a `tests/` folder pass them too: a cluster spec plans
/// under mocked providers, its pools placed from the clouds' published
/// GPU catalogs (a mock used to hide them, and the spec failed to expand).
#[test]
fn every_example_with_tests_passes_them() {
    assert_eq!(each_with_tests_passes("examples"), ["single-cloud"]);
}
