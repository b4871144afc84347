//! `providers lock` beside Terraform 1.11: the checksums of the test
//! provider's package for two platforms (their packages differ, as real
//! ones do) from a provider registry stand-in (`h1:` of each package
//! fetched, `zh:` of every platform's zip from the signed checksums) and
//! from a filesystem mirror of packed packages (`h1:` only); the same
//! lines, the same lock file, a second run finding nothing to change, a
//! lock file `init` then installs with; and Terraform's errors for what it
//! refuses.

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;

#[path = "common/lab.rs"]
mod lab;
use lab::{provider_zip, provider_zip_with, Lab, HEADER, SOURCE};

use std::path::Path;

const PLATFORMS: [&str; 2] = ["linux_amd64", "darwin_arm64"];

/// The darwin package differs from the linux one by a file.
fn package(platform: &str) -> Vec<u8> {
    match platform {
        "linux_amd64" => provider_zip(),
        _ => provider_zip_with(&[("README", "for another platform")]),
    }
}

/// A registry stand-in publishing the test provider at `versions`, each
/// with these platforms' packages.
fn publishing(
    versions: &[&str],
    packages: &[(&str, Vec<u8>)],
) -> strata_standin::registry::Registry {
    let registry = strata_standin::registry::start(None).unwrap();
    for version in versions {
        for (platform, zip) in packages {
            registry.publish_provider(strata_standin::registry::ProviderRelease {
                provider: "strata/stratatest".into(),
                version: version.to_string(),
                platform: platform.to_string(),
                protocols: vec!["6.0".into()],
                zip: zip.clone(),
            });
        }
    }
    registry
}

/// What `providers lock` said, its lines sorted (Terraform reports the
/// platforms in a map's order), with its name for itself as strata's.
fn said(out: &str) -> Vec<String> {
    let mut lines: Vec<String> = out
        .replace("Terraform", "strata")
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// `args` run by both tools in their own copy of `config`: what each
/// said and the lock file it left.
fn both(lab: &Lab, tag: &str, args: &[&str]) -> Vec<(Vec<String>, String)> {
    ["terraform", "strata"]
        .map(|tool| {
            let dir = lab.root.join(format!("{tag}-{tool}"));
            if !dir.exists() {
                std::fs::create_dir_all(dir.join("store")).unwrap();
                std::fs::write(dir.join("main.tf"), HEADER).unwrap();
            }
            let (code, out, err) = lab.run(tool, &dir, args);
            assert_eq!(code, 0, "{tool} {args:?}:\n{out}{err}");
            let lock = std::fs::read_to_string(dir.join(".terraform.lock.hcl")).unwrap_or_default();
            (said(&out), lock)
        })
        .into_iter()
        .collect()
}

#[test]
fn providers_lock_records_every_platforms_checksums_as_terraform_does() {
    if !require_terraform("providers_lock_records_every_platforms_checksums_as_terraform_does") {
        return;
    }
    let packages = PLATFORMS.map(|p| (p, package(p)));
    let registry = publishing(&["0.1.0"], &packages);
    let lab = Lab::new("providers-lock");
    // The CLI configuration's methods are ignored: only the registry (the
    // host's services) or the mirror named on the command line serve.
    lab.provider_registry(&registry.providers_url());
    let args = [
        "providers",
        "lock",
        "-no-color",
        "-platform=linux_amd64",
        "-platform=darwin_arm64",
    ];
    let first = both(&lab, "registry", &args);
    assert_eq!(first[0], first[1]);
    let (lines, lock) = &first[1];
    assert!(
        lines.iter().any(|l| l.starts_with("- Obtained registry.strata.test/strata/stratatest checksums for darwin_arm64; This was a new provider")),
        "{lines:?}"
    );
    assert_eq!(lock.matches("\"h1:").count(), 2, "{lock}");
    assert_eq!(lock.matches("\"zh:").count(), 2, "{lock}");
    // Again: nothing new.
    let again = both(&lab, "registry", &args[..4]);
    assert_eq!(again[0], again[1]);
    assert!(
        again[1]
            .0
            .iter()
            .any(|l| l
                == "Success! strata has validated the lock file and found no need for changes."),
        "{:?}",
        again[1].0
    );
    assert_eq!(
        &again[1].1, lock,
        "a run with nothing new changed the lock file"
    );
    // The lock file is one init installs with, from the registry.
    let dir = lab.root.join("registry-strata");
    lab.ok("strata", &dir, &["init", "-no-color"]);
    lab.ok("strata", &dir, &["plan", "-no-color"]);

    // A filesystem mirror of packed packages: `h1:` only.
    let mirror = lab.root.join("packed");
    let at = mirror.join(SOURCE);
    std::fs::create_dir_all(&at).unwrap();
    for (platform, zip) in &packages {
        let name = format!("terraform-provider-stratatest_0.1.0_{platform}.zip");
        std::fs::write(at.join(name), zip).unwrap();
    }
    let flag = format!("-fs-mirror={}", mirror.display());
    let mut args = args.to_vec();
    args.push(&flag);
    let mirrored = both(&lab, "mirror", &args);
    assert_eq!(mirrored[0], mirrored[1]);
    let lock = &mirrored[1].1;
    assert_eq!(lock.matches("\"h1:").count(), 2, "{lock}");
    assert!(!lock.contains("\"zh:"), "{lock}");
}

#[test]
fn providers_lock_refuses_what_terraform_refuses() {
    let lab = Lab::new("providers-lock-refused");
    let dir = lab.work_with("strata", HEADER);
    let cases: [(&[&str], &str); 4] = [
        (
            &["-fs-mirror=/tmp", "-net-mirror=https://example.com/"],
            "Invalid installation method options",
        ),
        (
            &["-net-mirror=http://example.com/"],
            "Invalid network mirror URL",
        ),
        (&["-platform=linux"], "Invalid target platform"),
        (&["hashicorp/aws"], "Invalid provider argument"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["providers", "lock", "-no-color"];
        args.extend_from_slice(extra);
        let (code, out, err) = lab.run("strata", &dir, &args);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(err.contains(want), "{args:?}: want {want:?}\n{err}");
    }
    assert!(!Path::new(&dir).join(".terraform.lock.hcl").exists());
}

/// `providers mirror DIR` beside Terraform: the packages of both
/// platforms from the registry (the CLI configuration's other methods
/// ignored), in the packed layout with the same JSON indexes, the lock
/// file's version followed; the directory then serves `init` as a
/// filesystem mirror.
#[test]
fn providers_mirror_lays_out_a_mirror_as_terraform_does() {
    if !require_terraform("providers_mirror_lays_out_a_mirror_as_terraform_does") {
        return;
    }
    let packages = PLATFORMS.map(|p| (p, package(p)));
    let registry = publishing(&["0.1.0", "0.2.0"], &packages);
    let lab = Lab::new("providers-mirror");
    lab.provider_registry(&registry.providers_url());
    let mut outs = Vec::new();
    for tool in ["terraform", "strata"] {
        let out = lab.root.join(format!("out-{tool}"));
        let flag = out.display().to_string();
        let dir = lab.root.join(format!("mirror-{tool}"));
        std::fs::create_dir_all(&dir).unwrap();
        // The lock file selects 0.1.0, the constraints would allow 0.2.0.
        std::fs::write(
            dir.join("main.tf"),
            HEADER.replace("\"0.1.0\"", "\">= 0.1.0\""),
        )
        .unwrap();
        let args = ["providers", "lock", "-no-color", "-platform=linux_amd64"];
        lab.ok(tool, &dir, &args);
        let lock = std::fs::read_to_string(dir.join(".terraform.lock.hcl")).unwrap();
        std::fs::write(
            dir.join(".terraform.lock.hcl"),
            lock.replace("0.2.0", "0.1.0"),
        )
        .unwrap();
        let args = [
            "providers",
            "mirror",
            "-platform=linux_amd64",
            "-platform=darwin_arm64",
            &flag,
        ];
        let printed = lab.ok(tool, &dir, &args);
        outs.push((said(&printed), files(&out)));
    }
    assert_eq!(outs[0].0, outs[1].0, "what they said");
    assert!(
        outs[1]
            .0
            .iter()
            .any(|l| l == "  - Selected v0.1.0 to match dependency lock file"),
        "{:?}",
        outs[1].0
    );
    let names = |o: &(Vec<String>, Vec<(String, Vec<u8>)>)| {
        o.1.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>()
    };
    assert_eq!(names(&outs[0]), names(&outs[1]));
    // Byte for byte: the packages and the indexes.
    for ((name, theirs), (_, ours)) in outs[0].1.iter().zip(&outs[1].1) {
        assert!(
            ours == theirs,
            "{name} differs:\n{}",
            String::from_utf8_lossy(ours)
        );
    }
    // The mirror serves init as a filesystem mirror.
    let out = lab.root.join("out-strata");

    std::fs::write(
        &lab.cli,
        format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path = {:?}\n  }}\n}}\n",
            out.display().to_string()
        ),
    )
    .unwrap();
    let dir = lab.work_with("from-mirror", HEADER);
    let said = lab.ok("strata", &dir, &["init", "-no-color"]);
    assert!(
        said.contains("- Installed registry.strata.test/strata/stratatest v0.1.0"),
        "{said}"
    );
}

/// Every file under `dir` (its path from `dir`) and its bytes, by name.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}
