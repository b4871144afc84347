//! `terraform-provider-stratatest`: a Terraform provider written for
//! strata's tests (issue 25), so both tools can be run through the same
//! real provider binary and compared. It keeps its objects as JSON files
//! in a directory (the provider's `store`), which tests read and change
//! behind the tools' backs to make drift.
//!
//! It speaks protocol 6 (5 with `STRATATEST_PROTOCOL=5`) and uses what a
//! plan and apply exercise: a required, optional, computed, sensitive and
//! replace-forcing attribute, a nested block, a nested attribute,
//! provider-private data, a schema version with a state upgrade, import, a
//! data source, moves from another type, diagnostics that carry attribute
//! paths, changes that fail after doing part of their work, and two
//! functions (`provider::stratatest::slug`, `…::tag`). A second
//! type, `stratatest_rules`, has blocks nested as a map; a third,
//! `stratatest_loose_rules`, blocks nested as a map and as a list whose
//! values may be of any type (Terraform's object and tuple typing); and
//! with `STRATATEST_ODD_SCHEMA` set, a fourth, `stratatest_odd`, declares
//! an attribute of a type that does not exist, for the tests of a type a
//! client cannot read. With `STRATATEST_LOG` naming a file, each process
//! start and each `GetProviderSchema` call appends a line to it (`start`,
//! `schema`), and a process asked to stop one as it ends (`stop`): how
//! often a client starts the provider, asks for its schema, and how many
//! processes it keeps at once; with `STRATATEST_CONFIGURE_MS` too, each configure logs
//! `configure`, waits that long and logs `configured`.

/// The provider's source address, as the tests install it.
pub const SOURCE: &str = "registry.strata.test/strata/stratatest";

mod action;
mod functions;
mod identity;
mod list;
mod object;
mod provider;
mod rules;
mod schema;
mod store;
mod token;
mod v5;

use std::sync::Arc;
use strata_plugin::proto::tfplugin5::provider_server::ProviderServer as V5Server;
use strata_plugin::proto::tfplugin6::provider_server::ProviderServer as V6Server;
use strata_plugin::serve::{serve, ServeError};
use tonic::service::Routes;

/// Appends `line` to the file `STRATATEST_LOG` names, if any.
pub fn log(line: &str) {
    use std::io::Write as _;
    let Some(path) = std::env::var_os("STRATATEST_LOG") else {
        return;
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path);
    // One write of the whole line: processes append to the same log at
    // once, and `writeln!` writes the line and its newline apart, so two
    // processes' lines could run together.
    if let Ok(mut f) = file {
        let _ = f.write_all(format!("{line}\n").as_bytes());
    }
}

#[tokio::main]
async fn main() {
    log("start");
    // Protocol 6 unless a test asks for 5 (STRATATEST_PROTOCOL=5).
    let supported = match std::env::var("STRATATEST_PROTOCOL").as_deref() {
        Ok("5") => vec![5],
        _ => vec![6],
    };
    let provider = Arc::new(provider::TestProvider::default());
    let served = serve(&supported, |version| match version {
        5 => Routes::new(V5Server::new(v5::Version5(provider))),
        _ => Routes::new(V6Server::from_arc(provider)),
    })
    .await;
    match served {
        Ok(()) => log("stop"),
        Err(e @ ServeError::NotStartedByClient) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("terraform-provider-stratatest: {e}");
            std::process::exit(1);
        }
    }
}
