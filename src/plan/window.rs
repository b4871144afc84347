//! The plan's side of the walk's [`Lifetimes`]: a provider configuration
//! that holds a process is opened a little before the walk needs it, and
//! its objects are upgraded by the provider and read back then, in the
//! same thread, rather than while the state is decoded and in the refresh
//! before the walk — which would start every configuration's process at
//! once and keep them all to the walk's end (twenty aliases of the AWS
//! provider, five gigabytes). The objects are worked on as copies: the
//! walk's own stay as the state held them until the thread is joined, so
//! one that never is (an interrupt) loses nothing.

use super::refresh::{self, PriorInstance};
use super::ResourceChange;
use crate::builtin::Drivers;
use crate::diag::{Diag, Diags};
use crate::walk::Lifetimes;
use petgraph::graph::NodeIndex;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use strata_provider::Driver;
use strata_state::model::Address;

/// The configurations the walk opens, and the objects each reads then.
pub(super) struct Window {
    lifetimes: Lifetimes<Opened>,
    /// By configuration, copies of its objects, each with whether it is
    /// read back (else only upgraded).
    waiting: HashMap<String, Vec<(PriorInstance, Reading)>>,
    drivers: Drivers,
    runtime: tokio::runtime::Handle,
    parallelism: usize,
}

/// Whether an object the window takes is read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    Read,
    /// Upgraded only: the plan reads nothing (`-refresh=false`) or not
    /// this object.
    AsStored,
}

/// What opening a configuration gave.
pub(super) struct Opened {
    /// Its refusal, told at its block.
    pub refused: Option<Diag>,
    /// Its objects upgraded and read back: their addresses, and what
    /// became of them (those still there, what changed outside strata).
    pub read: Option<(Vec<Address>, Result<Read, Diags>)>,
}

pub(super) type Read = (Vec<PriorInstance>, Vec<ResourceChange>);

impl Window {
    pub(super) fn new(
        lifetimes: Lifetimes<Opened>,
        drivers: &Drivers,
        runtime: tokio::runtime::Handle,
        parallelism: usize,
    ) -> Window {
        Window {
            lifetimes,
            waiting: HashMap::new(),
            drivers: drivers.clone(),
            runtime,
            parallelism,
        }
    }

    /// The addresses of the configurations the walk opens.
    pub(super) fn addresses(&self) -> HashSet<String> {
        self.lifetimes.addresses().map(str::to_string).collect()
    }

    /// Of `prior`, the objects of the window's configurations that wait
    /// for their provider's upgrade, and those `read` says are read back
    /// (none when the plan reads nothing), kept as copies; the addresses
    /// of those read back returned, for the refresh to skip.
    pub(super) fn take(
        &mut self,
        prior: &[PriorInstance],
        read: Option<&dyn Fn(&Address) -> bool>,
    ) -> HashSet<Address> {
        let opened: HashSet<&str> = self.lifetimes.addresses().collect();
        let mut skipped = HashSet::new();
        for p in prior {
            if !opened.contains(p.provider.as_str()) || p.deposed.is_some() {
                continue;
            }
            let reading = match read {
                Some(read) if read(&p.addr) => Reading::Read,
                _ => Reading::AsStored,
            };
            if reading == Reading::AsStored && p.held.is_none() {
                continue;
            }
            if reading == Reading::Read {
                skipped.insert(p.addr.clone());
            }
            let of = self.waiting.entry(p.provider.clone()).or_default();
            of.push((p.clone(), reading));
        }
        skipped
    }

    /// Before the node at `at` (see [`Lifetimes::before`]).
    pub(super) fn before(&mut self, at: usize) -> Vec<Opened> {
        let Window {
            lifetimes,
            waiting,
            drivers,
            runtime,
            parallelism,
        } = self;
        let mut open = |driver: &Arc<dyn Driver>, address: &str| {
            let objects = waiting.remove(address).unwrap_or_default();
            let (drivers, runtime, parallelism) = (drivers.clone(), runtime.clone(), *parallelism);
            let (driver, address) = (driver.clone(), address.to_string());
            std::thread::spawn(move || {
                if let Err(refused) = drivers.ready(&driver, &address) {
                    return Opened {
                        refused,
                        read: None,
                    };
                }
                let read = (!objects.is_empty()).then(|| {
                    let addrs = objects.iter().map(|(p, _)| p.addr.clone()).collect();
                    (addrs, brought(objects, &drivers, &runtime, parallelism))
                });
                Opened {
                    refused: None,
                    read,
                }
            })
        };
        lifetimes.before(at, &mut open)
    }

    /// See [`Lifetimes::keep`].
    pub(super) fn keep(&mut self, n: NodeIndex) {
        self.lifetimes.keep(n);
    }

    /// After the node at `at` (see [`Lifetimes::after`]).
    pub(super) fn after(&mut self, at: usize) {
        self.lifetimes.after(at);
    }
}

/// A configuration's objects upgraded by its provider, and those to read
/// read back.
fn brought(
    objects: Vec<(PriorInstance, Reading)>,
    drivers: &Drivers,
    runtime: &tokio::runtime::Handle,
    parallelism: usize,
) -> Result<Read, Diags> {
    let mut diags = Diags::default();
    let (mut read, mut as_stored) = (Vec::new(), Vec::new());
    for (mut p, reading) in objects {
        if let Err(d) = refresh::upgrade_held(&mut p, drivers) {
            diags.push(d);
        }
        match reading {
            Reading::Read => read.push(p),
            Reading::AsStored => as_stored.push(p),
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let none = |_: &Address| false;
    let (mut now, drift) = match read.is_empty() {
        true => (Vec::new(), Vec::new()),
        false => runtime.block_on(refresh::refresh(read, drivers, parallelism, &none))?,
    };
    now.extend(as_stored);
    Ok((now, drift))
}
