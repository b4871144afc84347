//! The real AWS provider's filesystem mirror on this machine.

use std::path::PathBuf;

/// Where Terraform's layout of the provider is: `STRATA_AWS_PROVIDER_MIRROR`,
/// else the image's. Under CI=true it must be there.
pub fn mirror() -> Option<PathBuf> {
    let dir = std::env::var("STRATA_AWS_PROVIDER_MIRROR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("/opt/tf-plugins"));
    let found = dir
        .join("registry.terraform.io/hashicorp/aws/5.100.0")
        .is_dir();
    assert!(
        found || std::env::var("CI").as_deref() != Ok("true"),
        "the AWS provider 5.100.0 is not at {} (set STRATA_AWS_PROVIDER_MIRROR); under CI=true the tests that hold strata to it must run",
        dir.display()
    );
    found.then_some(dir)
}
