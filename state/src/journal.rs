//! The apply journal: one fsynced line per finished resource operation, so
//! that every operation is durable at once without rewriting the whole state
//! (which would make an apply of N resources cost O(N²) bytes written).
//! The journal is folded into the state file when the run ends, and replayed
//! on the next load if the run died first.

use crate::model::{InstanceKey, InstanceState, OutputState, ResourceId, ResourceState, State};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// Written before a driver is asked to create something: if the run dies
    /// before the matching `put`, the next run knows to look for it (drivers
    /// tag what they create with the address and lineage).
    Intent { address: String, action: String },
    /// An instance now exists with these attributes.
    Put {
        resource: ResourceId,
        provider: String,
        instance: InstanceState,
    },
    /// An instance no longer exists.
    Remove {
        resource: ResourceId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index_key: Option<InstanceKey>,
    },
    /// An output's new value, or its removal.
    Output {
        name: String,
        output: Option<OutputState>,
    },
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub seq: u64,
    #[serde(flatten)]
    pub entry: Entry,
}

impl State {
    /// Applies one journal entry to the state.
    pub fn apply_entry(&mut self, entry: &Entry) {
        match entry {
            Entry::Intent { .. } => {}
            Entry::Put {
                resource,
                provider,
                instance,
            } => {
                let r = match self.resource_mut(resource) {
                    Some(r) => r,
                    None => {
                        self.resources.push(ResourceState {
                            id: resource.clone(),
                            provider: provider.clone(),
                            instances: Vec::new(),
                        });
                        let last = self.resources.len() - 1;
                        &mut self.resources[last]
                    }
                };
                r.provider = provider.clone();
                match r
                    .instances
                    .iter_mut()
                    .find(|i| i.index_key == instance.index_key)
                {
                    Some(existing) => *existing = instance.clone(),
                    None => r.instances.push(instance.clone()),
                }
            }
            Entry::Remove {
                resource,
                index_key,
            } => {
                if let Some(r) = self.resource_mut(resource) {
                    r.instances.retain(|i| &i.index_key != index_key);
                }
                self.resources.retain(|r| !r.instances.is_empty());
            }
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

    fn resource_mut(&mut self, id: &ResourceId) -> Option<&mut ResourceState> {
        self.resources.iter_mut().find(|r| r.id == *id)
    }
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
}

/// Parses journal text and applies it to `state`. Lines are complete JSON
/// objects ending in a newline; only the very last line may be torn.
pub fn replay(text: &str, state: &mut State) -> Result<Replay, (usize, String)> {
    let mut out = Replay::default();
    let mut open_intents: Vec<(String, Entry)> = Vec::new();
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
        match &record.entry {
            Entry::Intent { address, .. } => {
                open_intents.push((address.clone(), record.entry.clone()))
            }
            Entry::Put {
                resource, instance, ..
            } => {
                let addr = resource.instance_address(instance.index_key.as_ref());
                open_intents.retain(|(a, _)| *a != addr);
            }
            Entry::Remove {
                resource,
                index_key,
            } => {
                let addr = resource.instance_address(index_key.as_ref());
                open_intents.retain(|(a, _)| *a != addr);
            }
            Entry::Output { .. } => {}
        }
        state.apply_entry(&record.entry);
        out.applied += 1;
    }
    out.pending = open_intents.into_iter().map(|(_, e)| e).collect();
    Ok(out)
}
