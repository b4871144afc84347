//! Changes found by their address without the address held twice: a
//! table of positions in the plan's list of changes, hashed by the address
//! each change carries, instead of maps keyed by a copy of every
//! address.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;
use strata_state::model::Address;

use super::ResourceChange;

pub(super) struct ChangeIndex {
    positions: HashTable<usize>,
    hasher: RandomState,
}

impl ChangeIndex {
    pub(super) fn with_capacity(n: usize) -> ChangeIndex {
        ChangeIndex {
            positions: HashTable::with_capacity(n),
            hasher: RandomState::new(),
        }
    }

    /// The change at `at` answers for its address from now on, in place of
    /// one recorded before it.
    pub(super) fn insert(&mut self, changes: &[ResourceChange], at: usize) {
        let addr = &changes[at].addr;
        let hash = self.hasher.hash_one(addr);
        let hasher = &self.hasher;
        match self.positions.find_mut(hash, |&i| changes[i].addr == *addr) {
            Some(was) => *was = at,
            None => {
                self.positions
                    .insert_unique(hash, at, |&i| hasher.hash_one(&changes[i].addr));
            }
        }
    }

    /// The position of the change recorded for `addr`.
    pub(super) fn get(&self, changes: &[ResourceChange], addr: &Address) -> Option<usize> {
        let hash = self.hasher.hash_one(addr);
        self.positions
            .find(hash, |&i| changes[i].addr == *addr)
            .copied()
    }
}

/// The declared instances the walk has met: those planned, found through
/// their change, and the rest (whose planning failed, or left alone) by
/// address.
pub(super) struct Claims {
    planned: ChangeIndex,
    others: HashSet<Address>,
}

impl Claims {
    pub(super) fn with_capacity(n: usize) -> Claims {
        Claims {
            planned: ChangeIndex::with_capacity(n),
            others: HashSet::new(),
        }
    }

    /// `a` is declared; its change, if it gets one, comes later.
    pub(super) fn claim(&mut self, a: Address) {
        self.others.insert(a);
    }

    /// The change at `at`, of a claimed instance, now answers for it.
    pub(super) fn planned(&mut self, changes: &[ResourceChange], at: usize) {
        self.others.remove(&changes[at].addr);
        self.planned.insert(changes, at);
    }

    pub(super) fn contains(&self, changes: &[ResourceChange], a: &Address) -> bool {
        self.others.contains(a) || self.planned.get(changes, a).is_some()
    }
}
