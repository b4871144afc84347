//! The apply journal: one fsynced line per finished resource operation, so
//! that every operation is durable at once without rewriting the whole state
//! (which would make an apply of N resources cost O(N²) bytes written).
//! The journal is folded into the state file when the run ends, and replayed
//! on the next load if the run died first.

use crate::model::{
    Address, InstanceKey, InstanceState, Mode, ModulePath, OutputState, PoolPlacement,
    ResourceAddr, ResourceState, State,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// Written before a driver is asked to create something: if the run dies
    /// before the matching `put`, the next run knows to look for it (drivers
    /// tag what they create with the address and lineage).
    Intent {
        address: String,
        action: String,
        /// The provider configuration asked (an alias's address looks in
        /// its own region, account or cluster); absent in older journals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
        /// What the driver needs to find an untagged object the create
        /// may have made (the driver's `Recovery::trace`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace: Option<serde_json::Value>,
    },
    /// An instance now exists with these attributes.
    Put {
        resource: ResourceAddr,
        provider: String,
        instance: InstanceState,
    },
    /// An instance no longer exists.
    Remove {
        resource: ResourceAddr,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index_key: Option<InstanceKey>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deposed: Option<String>,
    },
    /// A `moved` block renamed an object: one line, so a crash never
    /// leaves it under both addresses or neither.
    Move { from: String, to: String },
    /// An output's new value, or its removal.
    Output {
        name: String,
        output: Option<OutputState>,
    },
    /// A pool's placement record, whole: written the moment a location
    /// fails or is chosen, so a run that dies mid-failover resumes with it.
    Placement {
        pool: String,
        placement: Option<PoolPlacement>,
    },
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub seq: u64,
    /// The serial of the state the line extends: a line whose state has
    /// since been written (a crash between writing the state and dropping
    /// the journal) is already in it. Absent in older journals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<u64>,
    #[serde(flatten)]
    pub entry: Entry,
}

impl State {
    /// Applies one journal entry to the state.
    pub fn apply_entry(&mut self, entry: &Entry) {
        self.apply_all(std::slice::from_ref(entry));
    }

    /// Applies entries in order, indexing the resources once so that N
    /// entries cost O(N) rather than a scan of the state each.
    pub fn apply_all<'e>(&mut self, entries: impl IntoIterator<Item = &'e Entry>) {
        let mut index: HashMap<ResourceAddr, usize> = self
            .resources
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.clone(), i))
            .collect();
        for entry in entries {
            match entry {
                Entry::Intent { .. } => {}
                Entry::Put {
                    resource,
                    provider,
                    instance,
                } => {
                    let i = *index.entry(resource.clone()).or_insert_with(|| {
                        self.resources.push(ResourceState {
                            id: resource.clone(),
                            provider: provider.clone(),
                            instances: Vec::new(),
                        });
                        self.resources.len() - 1
                    });
                    let r = &mut self.resources[i];
                    r.provider = provider.clone();
                    match r.instances.iter_mut().find(|i| {
                        i.index_key == instance.index_key && i.deposed == instance.deposed
                    }) {
                        Some(existing) => *existing = instance.clone(),
                        None => r.instances.push(instance.clone()),
                    }
                }
                Entry::Remove {
                    resource,
                    index_key,
                    deposed,
                } => {
                    if let Some(&i) = index.get(resource) {
                        self.resources[i]
                            .instances
                            .retain(|i| &i.index_key != index_key || &i.deposed != deposed);
                    }
                }
                Entry::Move { from, to } => {
                    let (Some(from), Some(to)) = (Address::parse(from), Address::parse(to)) else {
                        continue;
                    };
                    let Some(&i) = index.get(&from.id) else {
                        continue;
                    };
                    let Some(pos) = self.resources[i]
                        .instances
                        .iter()
                        .position(|x| x.index_key == from.key && x.deposed.is_none())
                    else {
                        continue;
                    };
                    let mut inst = self.resources[i].instances.remove(pos);
                    inst.index_key = to.key.clone();
                    let provider = self.resources[i].provider.clone();
                    let j = *index.entry(to.id.clone()).or_insert_with(|| {
                        self.resources.push(ResourceState {
                            id: to.id.clone(),
                            provider,
                            instances: Vec::new(),
                        });
                        self.resources.len() - 1
                    });
                    self.resources[j].instances.push(inst);
                }
                Entry::Placement { pool, placement } => match placement {
                    Some(p) => {
                        self.placements.insert(pool.clone(), p.clone());
                    }
                    None => {
                        self.placements.remove(pool);
                    }
                },
                Entry::Output { name, output } => match output {
                    Some(o) => {
                        self.outputs.insert(name.clone(), o.clone());
                    }
                    None => {
                        self.outputs.remove(name);
                    }
                },
            }
        }
        self.resources.retain(|r| !r.instances.is_empty());
        // Resources in Terraform's order: by module, then mode as its
        // file spells it ("data" before "managed"), type and name; so a
        // state both tools write reads the same in a diff.
        self.resources
            .sort_by(|a, b| terraform_order(a).cmp(&terraform_order(b)));
        // Instances of one resource in key order, as Terraform keeps them.
        for r in &mut self.resources {
            r.instances
                .sort_by(|a, b| (&a.index_key, &a.deposed).cmp(&(&b.index_key, &b.deposed)));
        }
    }
}

/// A resource's place in Terraform's order of a state's resources.
fn terraform_order(r: &ResourceState) -> (&ModulePath, bool, &str, &str) {
    let managed = r.id.mode == Mode::Managed;
    (&r.id.module, managed, &r.id.type_name, &r.id.name)
}

/// What replaying a journal found.
#[derive(Debug, Default, PartialEq)]
pub struct Replay {
    /// Entries applied to the state.
    pub applied: usize,
    /// Intents with no later `put` or `remove` for the same address: the
    /// operation may or may not have happened in the cloud.
    pub pending: Vec<Entry>,
    /// A last line cut short by a crash mid-write (never fsynced, so the
    /// operation it described was not reported done).
    pub torn_tail: bool,
    /// Lines skipped because the state already includes them.
    pub stale: usize,
}

/// Parses journal text and applies it to `state`. Lines are complete JSON
/// objects ending in a newline; only the very last line may be torn.
pub fn replay(text: &str, state: &mut State) -> Result<Replay, (usize, String)> {
    let mut out = Replay::default();
    let mut entries = Vec::new();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        // Only the last piece can lack its newline: a write cut short.
        let complete = line.ends_with('\n');
        let record: Record = match serde_json::from_str(line.trim_end()) {
            Ok(r) if complete => r,
            _ if !complete => {
                out.torn_tail = true;
                break;
            }
            Ok(_) => continue,
            Err(e) => return Err((i + 1, e.to_string())),
        };
        if record.base.is_some_and(|b| b != state.serial) {
            out.stale += 1;
            continue;
        }
        entries.push(record.entry);
        out.applied += 1;
    }
    if !entries.is_empty() {
        state.apply_all(&entries);
    }
    out.pending = open_intents(&entries);
    Ok(out)
}

/// The intents among `entries` that no later `put` or `remove` of the same
/// address answers: creates that may or may not have happened.
pub fn open_intents<'e>(entries: impl IntoIterator<Item = &'e Entry>) -> Vec<Entry> {
    let mut open: Vec<(String, &Entry)> = Vec::new();
    for entry in entries {
        let answered = match entry {
            Entry::Intent { address, .. } => {
                open.push((address.clone(), entry));
                continue;
            }
            Entry::Put {
                resource, instance, ..
            } => resource.instance_address(instance.index_key.as_ref()),
            Entry::Remove {
                resource,
                index_key,
                ..
            } => resource.instance_address(index_key.as_ref()),
            Entry::Move { .. } | Entry::Output { .. } | Entry::Placement { .. } => continue,
        };
        open.retain(|(a, _)| *a != answered);
    }
    open.into_iter().map(|(_, e)| e.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_a_state_already_written_are_not_applied_again() {
        let mut state = State::new();
        state.serial = 4;
        let line = |base: &str, name: &str| {
            format!("{{\"seq\":1,{base}\"kind\":\"output\",\"name\":\"{name}\",\"output\":{{\"value\":1,\"type\":\"number\"}}}}\n")
        };
        let text = [
            line("\"base\":3,", "folded"),
            line("\"base\":4,", "new"),
            line("", "old_format"),
        ]
        .concat();
        let replay = replay(&text, &mut state).expect("replay");
        assert_eq!(replay.stale, 1);
        assert_eq!(replay.applied, 2);
        let names: Vec<&String> = state.outputs.keys().collect();
        assert_eq!(names, ["new", "old_format"]);
    }
}
