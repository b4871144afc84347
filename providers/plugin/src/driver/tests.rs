use super::*;
use crate::packed::tests::typed;
use crate::packed::{pack, Asked};

/// A driver whose schemas are a saved plan's pack (`x_used` carried,
/// `x_other` named), launching a program that leaves `marker` when run.
fn saved_plan_driver(dir: &std::path::Path, marker: &std::path::Path) -> PluginDriver {
    let mut asked = Asked::default();
    for name in ["x_used", "x_other"] {
        asked
            .schema
            .resource_schemas
            .insert(name.into(), typed("name", b"\"string\""));
    }
    let whole = Schemas::of(Packed::read(pack(asked)).expect("packed")).expect("reads");
    assert!(whole.kind(TypeMode::Managed, "x_used").is_some());
    let program = dir.join("provider");
    let script = format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display());
    std::fs::write(&program, script).expect("script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let known = Known {
        cache: None,
        saved: Some(whole.used()),
    };
    PluginDriver::start(
        "x",
        "registry.strata.test/strata/x",
        Launch::provider(&program),
        known,
    )
    .expect("started from the saved schemas")
}

/// Every driver is asked for a type in turn until one has it: a type the
/// saved plan's provider does not name starts no process of it (it once
/// asked the provider for its whole schema for any type it lacked), and
/// its type names come from the plan. A type it names without the schema
/// is asked of the provider.
#[test]
fn another_providers_type_starts_no_process() {
    let dir = std::env::temp_dir().join(format!("strata-plugin-saved-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let marker = dir.join("started");
    let driver = saved_plan_driver(&dir, &marker);
    assert!(driver.schema(TypeMode::Managed, "x_used").is_some());
    assert!(driver.schema(TypeMode::Managed, "y_foreign").is_none());
    assert_eq!(driver.type_names(TypeMode::Managed), ["x_other", "x_used"]);
    assert!(!marker.exists(), "no process started");
    // Named, not carried: the provider is asked (here it fails to start).
    assert!(driver.schema(TypeMode::Managed, "x_other").is_none());
    assert!(marker.exists(), "the provider was asked for its schema");
    let _ = std::fs::remove_dir_all(&dir);
}
