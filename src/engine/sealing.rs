//! Saved plans through the configuration's `encryption { plan { … } }`:
//! sealed as they are written, opened as they are read. A plan file does
//! not carry its configuration's encryption, so a sealed one is opened
//! with the encryption of the configuration in the working directory, as
//! OpenTofu does.

use crate::config::{self, Module};
use crate::diag::{Diag, Diags, Sources};
use strata_state::encryption::{is_sealed, Payload};

/// A saved plan's text as it is to be written.
pub(super) fn seal_plan(module: &Module, text: &str) -> Result<String, Diags> {
    let chain = module.settings.sealings.plan()?;
    if chain.is_empty() {
        return Ok(text.to_string());
    }
    crate::backends::sealing(Payload::Plan, chain.to_vec())
        .seal(text)
        .map_err(|e| failed("Cannot encrypt the saved plan", e))
}

/// A plan file's text, opened when it is sealed.
pub(super) fn open_plan(text: String, sources: &mut Sources) -> Result<String, Diags> {
    if !is_sealed(&text) {
        return Ok(text);
    }
    let module = config::load(std::path::Path::new("."), sources)?;
    let chain = module.settings.sealings.plan()?.to_vec();
    if chain.is_empty() {
        return Err(Diags::from(Diag::new(
            "strata::plan::encrypted",
            "The plan file is encrypted",
            "The configuration here has no `encryption { plan { … } }` to open it: run in the directory whose configuration made it, with the variables its key provider needs.",
        )));
    }
    crate::backends::sealing(Payload::Plan, chain)
        .open(&text)
        .map(|(t, _)| t)
        .map_err(|e| failed("Cannot decrypt the saved plan", e))
}

fn failed(summary: &str, e: strata_state::encryption::EncryptionError) -> Diags {
    Diags::from(Diag::new(
        "strata::plan::encryption",
        summary,
        e.to_string(),
    ))
}
