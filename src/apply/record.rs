//! What the apply writes down: every entry goes to the journal (one durable
//! append per batch) before anything that depends on it starts, and is kept
//! to fold into the state when the apply ends, however it ends.

use crate::diag::{Diag, Diags};
use crate::lang::json::{mark_paths, value_to_json};
use crate::lang::types::Type;
use crate::lang::value::Value;
use crate::plan::ResourceChange;
use strata_state::model::{InstanceState, Mode, ResourceAddr};
use strata_state::{Entry, Journal, State};

pub struct Record<'j> {
    journal: &'j mut Journal,
    entries: Vec<Entry>,
}

impl<'j> Record<'j> {
    pub fn new(journal: &'j mut Journal) -> Record<'j> {
        Record {
            journal,
            entries: Vec::new(),
        }
    }

    /// Makes `batch` durable, in one append.
    pub fn commit(&mut self, batch: Vec<Entry>) -> Result<(), Diags> {
        self.journal
            .append_all(&batch)
            .map_err(|e| Diags::from(Diag::new("strata::state::journal", e.to_string(), "")))?;
        self.entries.extend(batch);
        Ok(())
    }

    /// The state with everything committed folded in.
    pub fn fold_into(self, mut state: State) -> State {
        state.apply_all(&self.entries);
        state
    }
}

/// How an object is recorded besides its value.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// The key of an object superseded by a create-before-destroy
    /// replacement.
    pub deposed: Option<String>,
    /// Left by a create that failed after the cloud made it.
    pub tainted: bool,
    /// What the driver keeps beside the object (a plugin provider's
    /// private data).
    pub private: Vec<u8>,
}

impl Status {
    /// A live object recorded with the driver's bytes kept beside it.
    pub fn keeping(private: &[u8]) -> Status {
        Status {
            private: private.to_vec(),
            ..Status::default()
        }
    }
}

/// The entry recording `v` as `c`'s object, of its schema's type `ty`.
pub fn put(ty: &Type, c: &ResourceChange, v: &Value, at: Status) -> Result<Entry, String> {
    Ok(Entry::Put {
        resource: c.addr.id.clone(),
        provider: c.provider.clone(),
        instance: InstanceState {
            index_key: c.addr.key.clone(),
            deposed: at.deposed,
            status: at.tainted.then(|| "tainted".to_string()),
            schema_version: c.schema_version,
            attributes: value_to_json(v, ty)?.into(),
            private: crate::plan::private_text(&at.private),
            // Terraform records no sensitive paths for a data source (its
            // `show` prints a remote state's secret outputs as they are).
            sensitive_attributes: match c.addr.id.mode {
                Mode::Data => Vec::new(),
                Mode::Managed => mark_paths(v),
            },
            dependencies: recorded_dependencies(c),
            create_before_destroy: c.create_before_destroy,
        },
    })
}

/// The dependencies the state keeps for `c`: none for a data source, as
/// Terraform keeps none (they order a destroy, and a data source is
/// never destroyed); a managed object's from the configuration.
pub fn recorded_dependencies(c: &ResourceChange) -> Vec<ResourceAddr> {
    match c.addr.id.mode {
        Mode::Data => Vec::new(),
        Mode::Managed => c.dependencies.clone(),
    }
}

/// The entry removing `c`'s object (its deposed one, given the key).
pub fn remove(c: &ResourceChange, deposed: Option<String>) -> Entry {
    Entry::Remove {
        resource: c.addr.id.clone(),
        index_key: c.addr.key.clone(),
        deposed,
    }
}
