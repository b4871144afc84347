//! What the apply writes down: every entry goes to the journal (one durable
//! append per batch) before anything that depends on it starts, and is kept
//! to fold into the state when the apply ends, however it ends. Every
//! twenty seconds the state itself is written too, as Terraform writes its
//! own, so a run killed with nothing to fold leaves Terraform a state that
//! holds what was done.

use crate::builtin::Drivers;
use crate::diag::{Diag, Diags};
use crate::lang::json::{mark_paths, value_to_json_text};
use crate::lang::types::Type;
use crate::lang::value::Value;
use crate::plan::ResourceChange;
use std::borrow::Cow;
use std::time::{Duration, Instant};
use strata_provider::Kept;
use strata_state::model::{InstanceState, Mode, ResourceAddr};
use strata_state::{open_intents, Entry, Journal, Lock, State, Store};

/// Where an apply writes down what it did: the journal, and every
/// `every` the whole state.
pub struct Sink<'s> {
    pub store: &'s Store,
    pub lock: &'s Lock,
    pub journal: Journal,
    /// How often the state itself is written during the apply, so a tool
    /// that reads only the state (Terraform, after a crash) sees what is
    /// done: [`persist_interval`].
    pub every: Duration,
}

pub struct Record<'s> {
    sink: Sink<'s>,
    /// Whose objects exist in the state alone ([`only_in_state`]).
    drivers: &'s Drivers,
    /// The state as the apply began (its serial the last one written).
    state: State,
    entries: Vec<Entry>,
    written: Instant,
}

impl<'s> Record<'s> {
    pub fn new(sink: Sink<'s>, state: State, drivers: &'s Drivers) -> Record<'s> {
        Record {
            sink,
            drivers,
            state,
            entries: Vec::new(),
            written: Instant::now(),
        }
    }

    /// Makes `batch` durable, in one append; writes the state when it has
    /// not been written for the sink's interval or a stop was asked for.
    /// A batch that records only objects existing in the state alone is
    /// written without waiting for the disk: losing it to a crash loses
    /// nothing outside, and the next durable batch carries it too.
    pub fn commit(&mut self, batch: Vec<Entry>) -> Result<(), Diags> {
        let outside = batch.iter().any(|e| outside(self.drivers, e));
        if outside && !self.sink.store.holds_state() {
            // The lineage tags every object made outside from here on; it
            // must be on disk before the first such create, or a crash
            // would leave objects tagged with a lineage no state
            // remembers. An apply that makes nothing outside (only
            // `terraform_data`, data sources) writes its state once, at
            // the end, as Terraform's first apply does.
            self.checkpoint()?;
        }
        let journal = &mut self.sink.journal;
        if batch.iter().all(|e| only_in_state(self.drivers, e)) {
            journal.append_unsynced(&batch)
        } else {
            journal.append_all(&batch)
        }
        .map_err(state_err)?;
        self.entries.extend(batch);
        // Once a stop is asked for, a hard kill may follow: every batch
        // is written through, as Terraform does when it is stopping.
        if self.written.elapsed() >= self.sink.every || crate::interrupt::requested() {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// Writes the state with everything committed, the creates still in
    /// flight carried in the journal.
    fn checkpoint(&mut self) -> Result<(), Diags> {
        let mut now = self.state.clone();
        now.apply_all(&self.entries);
        let open = open_intents(&self.entries);
        let Sink {
            store,
            lock,
            journal,
            ..
        } = &mut self.sink;
        store
            .checkpoint(lock, journal, &mut now, &open)
            .map_err(state_err)?;
        self.state.serial = now.serial;
        self.written = Instant::now();
        Ok(())
    }

    /// The state with everything committed folded in.
    pub fn fold(self) -> State {
        let mut state = self.state;
        state.apply_all(&self.entries);
        state
    }
}

/// Whether `e` records only an object that exists in the state alone: a
/// data source's last read, or an object of a type its driver keeps
/// nowhere else (`terraform_data`).
fn only_in_state(drivers: &Drivers, e: &Entry) -> bool {
    match object_of(e) {
        Some(id) => kept_alone(drivers, &id),
        None => false,
    }
}

/// Whether `e` is about an object that exists outside the state (whose
/// create an intent announces, and which is tagged with the lineage).
fn outside(drivers: &Drivers, e: &Entry) -> bool {
    object_of(e).is_some_and(|id| !kept_alone(drivers, &id))
}

/// The resource whose object `e` records, if it records one.
fn object_of(e: &Entry) -> Option<Cow<'_, ResourceAddr>> {
    match e {
        Entry::Put { resource, .. } | Entry::Remove { resource, .. } => {
            Some(Cow::Borrowed(resource))
        }
        Entry::Intent { address, .. } => {
            strata_state::Address::parse(address).map(|a| Cow::Owned(a.id))
        }
        Entry::Move { .. } | Entry::Output { .. } | Entry::Placement { .. } => None,
    }
}

fn kept_alone(drivers: &Drivers, id: &ResourceAddr) -> bool {
    match id.mode {
        Mode::Data => true,
        Mode::Managed => drivers
            .resource(&id.type_name)
            .is_some_and(|(d, _)| d.only_in_state(&id.type_name)),
        Mode::Ephemeral => false,
    }
}

fn state_err(e: strata_state::StateError) -> Diags {
    Diags::from(Diag::new("strata::state::journal", e.to_string(), ""))
}

/// How often an apply writes the state: every 20 seconds, or
/// `TF_STATE_PERSIST_INTERVAL` seconds when that is more, as Terraform.
pub fn persist_interval() -> Duration {
    const LEAST: u64 = 20;
    let secs = std::env::var("TF_STATE_PERSIST_INTERVAL")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|s| *s > LEAST)
        .unwrap_or(LEAST);
    Duration::from_secs(secs)
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
    /// private data and the object's identity).
    pub kept: Kept,
}

impl Status {
    /// A live object recorded with what the driver keeps beside it.
    pub fn keeping(kept: &Kept) -> Status {
        Status {
            kept: kept.clone(),
            ..Status::default()
        }
    }
}

/// The entry recording `v` as `c`'s object, of its schema's type `ty`.
pub fn put(ty: &Type, c: &ResourceChange, v: &Value, at: Status) -> Result<Entry, String> {
    let (provider, instance_provider) = strata_state::provider_parts(&c.provider);
    Ok(Entry::Put {
        resource: c.addr.id.clone(),
        provider,
        instance: InstanceState {
            index_key: c.addr.key.clone(),
            provider: instance_provider,
            deposed: at.deposed,
            status: at.tainted.then(|| "tainted".to_string()),
            schema_version: c.schema_version,
            attributes: value_to_json_text(v, ty)?.into(),
            private: crate::plan::private_text(&at.kept.private),
            identity_schema_version: at.kept.identity.as_ref().map(|i| i.version),
            identity: at.kept.identity.as_ref().map(|i| Box::new(i.value.clone())),
            // Terraform records no sensitive paths for a data source (its
            // `show` prints a remote state's secret outputs as they are).
            sensitive_attributes: match c.addr.id.mode {
                Mode::Data | Mode::Ephemeral => Vec::new(),
                Mode::Managed => mark_paths(v),
            },
            dependencies: recorded_dependencies(c),
            create_before_destroy: c.create_before_destroy,
            skip_destroy: c.skip_destroy,
        },
    })
}

/// The dependencies the state keeps for `c`: none for a data source, as
/// Terraform keeps none (they order a destroy, and a data source is
/// never destroyed); a managed object's from the configuration.
pub fn recorded_dependencies(c: &ResourceChange) -> Vec<ResourceAddr> {
    match c.addr.id.mode {
        Mode::Data | Mode::Ephemeral => Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use strata_state::model::ModulePath;

    fn put(mode: Mode, type_name: &str) -> Entry {
        Entry::Put {
            resource: ResourceAddr {
                module: ModulePath::root(),
                mode,
                type_name: type_name.into(),
                name: "x".into(),
            },
            provider: "provider[\"terraform.io/builtin/terraform\"]".into(),
            instance: serde_json::from_value(serde_json::json!({
                "schema_version": 0, "attributes": {}
            }))
            .expect("instance"),
        }
    }

    #[test]
    fn only_records_of_objects_kept_nowhere_else_skip_the_sync() {
        let drivers = Drivers::builtin();
        let alone = |e: &Entry| only_in_state(&drivers, e);
        assert!(alone(&put(Mode::Managed, "terraform_data")));
        assert!(alone(&put(Mode::Managed, "random_id")));
        assert!(
            alone(&put(Mode::Data, "local_file")),
            "a data source's last read"
        );
        assert!(
            !alone(&put(Mode::Managed, "local_file")),
            "the file stays on disk"
        );
        assert!(
            !alone(&put(Mode::Managed, "aws_vpc")),
            "no driver here: synced"
        );
        let intent = |address: &str| Entry::Intent {
            address: address.into(),
            action: "create".into(),
            provider: None,
            trace: None,
        };
        assert!(alone(&intent("module.m.terraform_data.x[\"k\"]")));
        assert!(!alone(&intent("local_file.x")));
        assert!(!alone(&Entry::Output {
            name: "o".into(),
            output: None
        }));
    }
}
