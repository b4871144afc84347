//! The ephemeral resources a walk holds open (Terraform 1.10's `ephemeral`
//! blocks). A plan and an apply each open every instance their walk
//! reaches whose configuration is known, renew it in the background when
//! its driver asks to be renewed by a time, and close everything they
//! opened when the walk is over — whether it succeeded or not. Nothing of
//! an ephemeral resource is kept: its object lives in the walk's table
//! while the walk runs, and is gone with it.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};
use strata_provider::{Driver, DriverError};
use strata_state::model::Address;
use strata_value::value::Value;
use tokio::runtime::Handle;

pub use crate::ui::EphemeralStep;

/// One step, told as it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EphemeralSaid {
    pub addr: Address,
    pub step: EphemeralStep,
}

/// Where the steps go: the plan keeps them to show, the apply says them.
pub type Tell = Box<dyn Fn(EphemeralSaid) + Send + Sync>;

/// An instance held open.
struct Held {
    addr: Address,
    type_name: String,
    driver: Arc<dyn Driver>,
    /// The driver's bytes, replaced by each renewal.
    private: Arc<Mutex<Option<Vec<u8>>>>,
    /// The background renewal, stopped before the close.
    renewer: Option<tokio::task::JoinHandle<()>>,
}

/// A failed close, for the caller to report.
pub struct CloseFailed {
    pub addr: Address,
    pub error: DriverError,
}

/// What one walk holds open.
pub struct Ephemerals {
    held: Mutex<Vec<Held>>,
    tell: Tell,
    handle: Handle,
}

/// Runs `f` to its end from the walk, which may itself run on the
/// runtime's threads (the apply) or outside them (the plan).
fn block<F: Future>(handle: &Handle, f: F) -> F::Output {
    match Handle::try_current() {
        Ok(_) => tokio::task::block_in_place(|| handle.block_on(f)),
        Err(_) => handle.block_on(f),
    }
}

impl Ephemerals {
    pub fn new(handle: Handle, tell: Tell) -> Ephemerals {
        Ephemerals {
            held: Mutex::new(Vec::new()),
            tell,
            handle,
        }
    }

    fn say(&self, addr: &Address, step: EphemeralStep) {
        (self.tell)(EphemeralSaid {
            addr: addr.clone(),
            step,
        });
    }

    /// Opens instance `addr` of `type_name` from `config`: its object, or
    /// `None` when the configuration is not wholly known yet (the apply
    /// opens it once it is).
    pub fn open(
        &self,
        addr: &Address,
        (type_name, driver): (&str, &Arc<dyn Driver>),
        config: &Value,
    ) -> Result<Option<Value>, DriverError> {
        if !config.is_wholly_known() {
            self.say(addr, EphemeralStep::Deferred);
            return Ok(None);
        }
        self.say(addr, EphemeralStep::Opening);
        let began = Instant::now();
        let opened = block(&self.handle, driver.open(type_name, config))?;
        let secs = began.elapsed().as_secs();
        self.say(addr, EphemeralStep::Opened { secs });
        let private = Arc::new(Mutex::new(opened.private));
        let renewer = opened.renew_at.map(|at| {
            let renewing = Renewing {
                type_name: type_name.to_string(),
                driver: driver.clone(),
                private: private.clone(),
            };
            self.handle.spawn(renewing.run(at))
        });
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.push(Held {
            addr: addr.clone(),
            type_name: type_name.to_string(),
            driver: driver.clone(),
            private,
            renewer,
        });
        Ok(Some(opened.result))
    }

    /// Closes every instance held, in the order they were opened; what a
    /// driver failed to close, to report.
    pub fn close_all(&self) -> Vec<CloseFailed> {
        let held = std::mem::take(&mut *self.held.lock().unwrap_or_else(|p| p.into_inner()));
        self.close(held)
    }

    /// Closes the instances held of the ephemeral resource `config` (in
    /// every module instance), once nothing left in the walk uses them.
    pub fn close_of(&self, config: &strata_state::model::ResourceAddr) -> Vec<CloseFailed> {
        let these = {
            let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            let (these, rest) = std::mem::take(&mut *held)
                .into_iter()
                .partition(|h| h.addr.id.config() == *config);
            *held = rest;
            these
        };
        self.close(these)
    }

    fn close(&self, held: Vec<Held>) -> Vec<CloseFailed> {
        let mut failed = Vec::new();
        for h in held {
            if let Some(r) = h.renewer {
                r.abort();
            }
            self.say(&h.addr, EphemeralStep::Closing);
            let began = Instant::now();
            let private = h.private.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let closed = block(
                &self.handle,
                h.driver.close(&h.type_name, private.as_deref()),
            );
            match closed {
                Ok(()) => {
                    let secs = began.elapsed().as_secs();
                    self.say(&h.addr, EphemeralStep::Closed { secs });
                }
                Err(error) => failed.push(CloseFailed {
                    addr: h.addr,
                    error,
                }),
            }
        }
        failed
    }
}

/// Whatever a walk that ended early (an error on its way) still holds is
/// closed all the same; what fails then has no one left to tell.
impl Drop for Ephemerals {
    fn drop(&mut self) {
        let _ = self.close_all();
    }
}

/// An open instance's renewals: at each time its driver gives, until the
/// close stops it or the driver gives no next time.
struct Renewing {
    type_name: String,
    driver: Arc<dyn Driver>,
    private: Arc<Mutex<Option<Vec<u8>>>>,
}

impl Renewing {
    async fn run(self, mut at: SystemTime) {
        loop {
            let wait = at.duration_since(SystemTime::now()).unwrap_or_default();
            tokio::time::sleep(wait).await;
            let private = self
                .private
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            // A failed renewal leaves the instance as it is: whatever
            // uses it next reports what the provider then says.
            let Ok(renewed) = self.driver.renew(&self.type_name, private.as_deref()).await else {
                return;
            };
            // A renewal that sends no private data keeps what was there.
            if let Some(private) = renewed.private {
                *self.private.lock().unwrap_or_else(|p| p.into_inner()) = Some(private);
            }
            match renewed.renew_at {
                Some(next) => at = next,
                None => return,
            }
        }
    }
}
