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

/// Every example's `tests/` folder passes: each cluster spec plans (and
/// applies, to the mocks) under mocked providers, its pools placed from
/// the clouds' published GPU catalogs, and the assertions read the module
/// calls the spec expands into (`module.train_aws.portable`).
#[test]
fn every_example_with_tests_passes_them() {
    assert_eq!(
        each_with_tests_passes("examples"),
        [
            "existing-kubernetes",
            "failover",
            "multi-cloud",
            "single-cloud"
        ]
    );
}

/// Under `strata test` the failover example's nodes are what its mock
/// says: with the mocked `kubernetes_nodes` offering no GPU, each place is
/// left after one look (a mock answers the same every time; waiting
/// `wait_for_gpus` there took 20 minutes a place) and the apply fails as
/// `strata apply` does when a pool has nowhere left to go — strata's test
/// used to pass such a run.
#[test]
fn a_failover_whose_mocked_nodes_offer_no_gpu_fails_the_run() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let top = std::env::temp_dir().join(format!("strata-failover-nogpu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&top);
    let dir = top.join("failover");
    copy(&examples.join("failover"), &dir);
    // Its mocks' files (`source = "../mocks/…"`).
    copy(&examples.join("mocks"), &top.join("mocks"));
    let test = dir.join("tests/plan.tftest.hcl");
    let text = std::fs::read_to_string(&test).expect("read");
    let start = text
        .find("  mock_data \"kubernetes_nodes\"")
        .expect("the nodes' mock");
    let end = start + text[start..].find("\n  }\n").expect("its end") + 5;
    std::fs::write(&test, format!("{}{}", &text[..start], &text[end..])).expect("write");
    let (code, out) = run::strata_in(&dir, &["test", "-no-color"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("run \"applies_every_place\"... fail"), "{out}");
    assert!(
        out.contains("Node pool train.h100 has no place with capacity"),
        "{out}"
    );
    assert!(
        out.contains("offered an allocatable nvidia.com/gpu"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
