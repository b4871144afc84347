//! Driver calls in flight: at most `parallelism` at once, the rest queued;
//! progress lines in Terraform's words when a terminal is watching.

use crate::lang::value::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata_provider::{Driver, DriverError, Tags};
use tokio::task::JoinSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Create,
    Update,
    Delete,
    Read,
}

impl OpKind {
    fn words(self) -> (&'static str, &'static str, &'static str) {
        match self {
            OpKind::Create => ("Creating...", "creating", "Creation complete"),
            OpKind::Update => ("Modifying...", "modifying", "Modifications complete"),
            OpKind::Delete => ("Destroying...", "destroying", "Destruction complete"),
            OpKind::Read => ("Reading...", "reading", "Read complete"),
        }
    }
}

pub struct OpResult {
    pub op: usize,
    /// The object now (none after a delete), or the error.
    pub result: Result<Option<Value>, String>,
    /// After a failed create, what the cloud made anyway (found by its
    /// ownership tags).
    pub leftover: Option<Value>,
}

type TaskResult = (Result<Option<Value>, String>, Option<Value>);

struct Op {
    id: usize,
    kind: OpKind,
    addr: String,
    driver: Arc<dyn Driver>,
    type_name: String,
    /// The object an update or delete acts on; for a create under
    /// create_before_destroy, the one it replaces (else null).
    prior: Value,
    planned: Option<(Value, Tags)>,
}

pub struct Runner {
    parallelism: usize,
    progress: bool,
    set: JoinSet<TaskResult>,
    queue: VecDeque<Op>,
    running: HashMap<usize, (String, OpKind, Instant)>,
    /// Task id → op id, so a driver task that panics is still reported.
    tasks: HashMap<tokio::task::Id, usize>,
}

const TICK: Duration = Duration::from_secs(10);

fn id_of(v: &Value) -> Option<String> {
    v.unmarked()
        .entries()?
        .get("id")?
        .as_str()
        .map(str::to_string)
}

/// After a create, deletes the objects carrying its ownership tags other
/// than `kept` (the one the create returned) and the one it replaces: when
/// a call's answer was lost after the cloud acted, the client's retry makes
/// the object again, and the first one would be an orphan no state knows.
/// Without `kept` (the create failed) the first found is returned, to be
/// adopted or recorded tainted, and the rest deleted. Best effort: the create's outcome stands whatever the
/// sweep meets (the drivers' own retries are behind every call it makes).
async fn sweep(op: &Op, tags: &Tags, kept: Option<&str>) -> Option<Value> {
    let found = op.driver.find_tagged(&op.type_name, tags).await.ok()?;
    let replaced = id_of(&op.prior);
    let mut others = found.into_iter().filter(|v| {
        let id = id_of(v);
        id.is_some() && id.as_deref() != kept && id != replaced
    });
    let leftover = if kept.is_none() { others.next() } else { None };
    for v in others {
        let _ = op.driver.delete(&op.type_name, &v).await;
    }
    leftover
}

impl Runner {
    pub fn new(parallelism: usize, progress: bool) -> Runner {
        Runner {
            parallelism: parallelism.max(1),
            progress,
            set: JoinSet::new(),
            queue: VecDeque::new(),
            running: HashMap::new(),
            tasks: HashMap::new(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &mut self,
        id: usize,
        kind: OpKind,
        addr: String,
        driver: Arc<dyn Driver>,
        type_name: String,
        prior: Value,
        planned: Option<(Value, Tags)>,
    ) {
        self.queue.push_back(Op {
            id,
            kind,
            addr,
            driver,
            type_name,
            prior,
            planned,
        });
        self.fill();
    }

    fn fill(&mut self) {
        while self.running.len() < self.parallelism {
            let Some(op) = self.queue.pop_front() else {
                return;
            };
            if self.progress {
                let id = match op.kind {
                    OpKind::Create => String::new(),
                    _ => id_of(&op.prior)
                        .map(|i| format!(" [id={i}]"))
                        .unwrap_or_default(),
                };
                eprintln!("{}: {}{id}", op.addr, op.kind.words().0);
            }
            self.running
                .insert(op.id, (op.addr.clone(), op.kind, Instant::now()));
            let id = op.id;
            let handle = self.set.spawn(async move {
                let r = match (op.kind, &op.planned) {
                    (OpKind::Create, Some((planned, tags))) => {
                        let made = op.driver.create(&op.type_name, planned, tags).await;
                        let kept = made.as_ref().ok().and_then(id_of);
                        let leftover = sweep(&op, tags, kept.as_deref()).await;
                        return match (made, leftover) {
                            (Ok(v), _) => (Ok(Some(v)), None),
                            // Refused as existing, and there it is with this
                            // create's tags: the call's first attempt made
                            // it and its answer was lost. It is the object,
                            // brought to the plan (a listing does not show
                            // what only the configuration holds).
                            (Err(DriverError::AlreadyExists { .. }), Some(v)) => {
                                match op.driver.update(&op.type_name, &v, planned).await {
                                    Ok(now) => (Ok(Some(now)), None),
                                    Err(e) => (Err(e.to_string()), Some(v)),
                                }
                            }
                            (Err(e), leftover) => (Err(e.to_string()), leftover),
                        };
                    }
                    (OpKind::Update, Some((planned, _))) => op
                        .driver
                        .update(&op.type_name, &op.prior, planned)
                        .await
                        .map(Some),
                    (OpKind::Read, Some((config, _))) => {
                        op.driver.read_data(&op.type_name, config).await.map(Some)
                    }
                    (OpKind::Delete, _) => op
                        .driver
                        .delete(&op.type_name, &op.prior)
                        .await
                        .map(|()| None),
                    _ => Ok(None),
                };
                (r.map_err(|e| e.to_string()), None)
            });
            self.tasks.insert(handle.id(), id);
        }
    }

    /// Waits for at least one operation to finish and returns every one
    /// that has; empty when nothing is running.
    pub async fn next(&mut self) -> Vec<OpResult> {
        let mut out = Vec::new();
        if self.running.is_empty() {
            return out;
        }
        let mut raw = Vec::new();
        loop {
            tokio::select! {
                r = self.set.join_next_with_id() => {
                    raw.extend(r);
                    break;
                }
                _ = tokio::time::sleep(TICK) => self.still_running(),
            }
        }
        while let Some(r) = self.set.try_join_next_with_id() {
            raw.push(r);
        }
        for r in raw {
            let (task, (result, leftover)) = match r {
                Ok((task, result)) => (task, result),
                Err(e) => (e.id(), (Err(format!("the driver crashed: {e}")), None)),
            };
            if let Some(op) = self.tasks.remove(&task) {
                out.push(OpResult {
                    op,
                    result,
                    leftover,
                });
            }
        }
        let results = out;
        for r in &results {
            if let Some((addr, kind, started)) = self.running.remove(&r.op) {
                if self.progress {
                    let secs = started.elapsed().as_secs();
                    match &r.result {
                        Ok(v) => {
                            let id = v
                                .as_ref()
                                .and_then(id_of)
                                .map(|i| format!(" [id={i}]"))
                                .unwrap_or_default();
                            eprintln!("{addr}: {} after {secs}s{id}", kind.words().2);
                        }
                        Err(_) => eprintln!("{addr}: failed after {secs}s"),
                    }
                }
            }
        }
        self.fill();
        results
    }

    fn still_running(&self) {
        if !self.progress {
            return;
        }
        let mut rows: Vec<_> = self.running.values().collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        for (addr, kind, started) in rows {
            let secs = started.elapsed().as_secs();
            eprintln!("{addr}: Still {}... [{secs}s elapsed]", kind.words().1);
        }
    }
}
