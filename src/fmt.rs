//! `strata fmt`: Terraform's canonical layout.

use std::path::Path;
use std::process::ExitCode;

pub fn run(_path: &Path, _check: bool) -> ExitCode {
    ExitCode::from(1)
}
