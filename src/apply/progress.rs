//! What an apply says while it works, as Terraform says it: lines on
//! stdout (`Creating...`, `Still creating... [10s elapsed]`, `Creation
//! complete after 2s [id=…]`), or the machine-readable UI's messages
//! (`apply_start`, `apply_progress`, `apply_complete`, `apply_errored`).

use super::op::OpKind;
use serde_json::json;
use strata_state::model::Address;

/// How an apply reports its operations: in which form, and where the
/// lines go. The CLI's printer writes them; this stage only words them.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub form: Form,
    /// Takes what is said as it happens: a line, or the lines of a batch
    /// of operations joined by newlines (a function, since operations run
    /// on threads of their own).
    pub say: fn(&str),
}

/// The form of an apply's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Terraform's lines.
    Lines,
    /// Terraform's machine-readable UI, one JSON message a line.
    Json,
}

/// One thing that happened to an operation on `addr` (the instance's
/// address as text).
pub(super) enum Event<'a> {
    Start { id: Option<&'a str> },
    Still { secs: u64 },
    Done { secs: u64, id: Option<&'a str> },
    Failed { secs: u64 },
}

impl OpKind {
    /// Terraform's words: starting, going on, finished, failed.
    fn words(self) -> [&'static str; 4] {
        match self {
            OpKind::Create => [
                "Creating...",
                "creating",
                "Creation complete",
                "Creation errored",
            ],
            OpKind::Update => [
                "Modifying...",
                "modifying",
                "Modifications complete",
                "Modifications errored",
            ],
            OpKind::Delete => [
                "Destroying...",
                "destroying",
                "Destruction complete",
                "Destruction errored",
            ],
            OpKind::Read => ["Reading...", "reading", "Read complete", "Read errored"],
            // Provisioning is the end of a create.
            OpKind::Provision => OpKind::Create.words(),
            OpKind::AfterUpdate => OpKind::Update.words(),
        }
    }

    /// The hook's `action`.
    fn action(self) -> &'static str {
        match self {
            OpKind::Create => "create",
            OpKind::Update => "update",
            OpKind::Delete => "delete",
            OpKind::Read => "read",
            OpKind::Provision => "create",
            OpKind::AfterUpdate => "update",
        }
    }
}

impl Progress {
    pub(super) fn emit(self, addr: &str, kind: OpKind, e: Event<'_>) {
        if let Some(said) = self.line(addr, kind, e) {
            (self.say)(&said);
        }
    }

    /// Says `lines` at once: the operations a batch starts or finishes
    /// reach the terminal (or a pipe) in one write, not one write each.
    pub(super) fn say_all(self, lines: &[String]) {
        if !lines.is_empty() {
            (self.say)(&lines.join("\n"));
        }
    }

    /// What is said of an event, in this form (nothing for an address the
    /// machine-readable form cannot name).
    pub(super) fn line(self, addr: &str, kind: OpKind, e: Event<'_>) -> Option<String> {
        let words = kind.words();
        // A deposed object is named as such when its delete starts only.
        let addr = match e {
            Event::Start { .. } => addr,
            _ => addr.split(" (deposed object ").next().unwrap_or(addr),
        };
        let with_id = |id: Option<&str>| id.map(|i| format!(" [id={i}]")).unwrap_or_default();
        let (said, what) = match e {
            Event::Start { id } => (
                format!("{addr}: {}{}", words[0], with_id(id)),
                "apply_start",
            ),
            Event::Still { secs } => (
                format!("{addr}: Still {}... [{secs}s elapsed]", words[1]),
                "apply_progress",
            ),
            Event::Done { secs, id } => (
                format!("{addr}: {} after {secs}s{}", words[2], with_id(id)),
                "apply_complete",
            ),
            Event::Failed { secs } => (
                format!("{addr}: {} after {secs}s", words[3]),
                "apply_errored",
            ),
        };
        match self.form {
            Form::Lines => Some(said),
            Form::Json => {
                let instance = addr.split(" (deposed object ").next().unwrap_or(addr);
                let parsed = Address::parse(instance)?;
                let mut hook =
                    json!({"resource": crate::ui::resource(&parsed), "action": kind.action()});
                match e {
                    Event::Start { id: Some(id) } | Event::Done { id: Some(id), .. } => {
                        hook["id_key"] = json!("id");
                        hook["id_value"] = json!(id);
                    }
                    _ => {}
                }
                if let Event::Still { secs } | Event::Done { secs, .. } | Event::Failed { secs } = e
                {
                    hook["elapsed_seconds"] = json!(secs);
                }
                let level = if what == "apply_errored" {
                    "error"
                } else {
                    "info"
                };
                Some(crate::ui::line(level, &said, what, json!({"hook": hook})))
            }
        }
    }
}

impl Progress {
    /// A step of an ephemeral resource instance's.
    pub(super) fn ephemeral(self, addr: &Address, step: &crate::ui::EphemeralStep) {
        let said = match self.form {
            Form::Lines => Some(step.line(addr)),
            Form::Json => step.json(addr),
        };
        if let Some(said) = said {
            (self.say)(&said);
        }
    }

    /// A provisioner starting on `addr`.
    pub(super) fn provisioning(self, addr: &str, kind: &str) {
        let said = format!("{addr}: Provisioning with '{kind}'...");
        self.provision_message(addr, kind, said, "provision_start", None);
    }

    /// A line a provisioner said.
    pub(super) fn provision_line(self, addr: &str, kind: &str, line: &str) {
        let said = format!("{addr} ({kind}): {line}");
        self.provision_message(addr, kind, said, "provision_progress", Some(line));
    }

    fn provision_message(
        self,
        addr: &str,
        kind: &str,
        said: String,
        what: &str,
        output: Option<&str>,
    ) {
        match self.form {
            Form::Lines => (self.say)(&said),
            Form::Json => {
                let Some(parsed) = Address::parse(addr) else {
                    return;
                };
                let mut hook =
                    json!({"resource": crate::ui::resource(&parsed), "provisioner": kind});
                if let Some(line) = output {
                    hook["output"] = json!(line);
                }
                (self.say)(&crate::ui::line("info", &said, what, json!({"hook": hook})));
            }
        }
    }
}

impl Progress {
    /// A step of an action a resource's change triggers, as Terraform's
    /// hook says it.
    pub(super) fn action(self, a: &crate::plan::ActionInvocation, step: crate::ui::ActionStep<'_>) {
        use crate::ui::ActionStep;
        match self.form {
            Form::Lines => {
                let said = a.said();
                (self.say)(&match step {
                    ActionStep::Started => format!("Action started: {said}"),
                    ActionStep::Progress(m) => format!("Action {said}: {m}"),
                    ActionStep::Complete => format!("Action complete: {said}"),
                    ActionStep::Errored(why) => format!("Action failed: {said} - {why}"),
                });
            }
            Form::Json => {
                let lifecycle = a.lifecycle().map(|l| crate::ui::LifecycleHook {
                    resource: &l.resource,
                    block: l.block,
                    index: l.index,
                    event: crate::plan::action_event_name(l.event),
                    on_failure: crate::plan::action_on_failure_name(l.on_failure),
                });
                let hook = crate::ui::ActionHook {
                    addr: &a.addr,
                    type_name: &a.type_name,
                    name: &a.name,
                    lifecycle,
                };
                (self.say)(&crate::ui::action_said(&hook, step));
            }
        }
    }
}

/// How many operations make an apply large enough for a count every ten
/// seconds: below it, the `Still …` lines tell the whole story.
pub(super) const LARGE_APPLY: usize = 50;

/// Where a large apply stands (strata's own line: Terraform has none),
/// said with each round of `Still …` lines; `None` for a small apply or
/// the machine-readable UI.
pub(super) fn tally(progress: Progress, t: &Tally) -> Option<String> {
    if progress.form != Form::Lines || t.total < LARGE_APPLY {
        return None;
    }
    let failed = match t.failed {
        0 => String::new(),
        n => format!(", {n} failed"),
    };
    Some(format!(
        "Progress: {} of {} operations done ({} running{failed})",
        t.done, t.total, t.running
    ))
}

/// The counts of an apply's operations so far.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    /// Every operation the plan asks for (a replacement is two).
    pub total: usize,
    pub done: usize,
    pub failed: usize,
    pub running: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_apply_says_where_it_stands() {
        let t = Tally {
            total: 300,
            done: 120,
            failed: 1,
            running: 8,
        };
        let form = |form| Progress { form, say: |_| {} };
        assert_eq!(
            tally(form(Form::Lines), &t).as_deref(),
            Some("Progress: 120 of 300 operations done (8 running, 1 failed)")
        );
        assert_eq!(tally(form(Form::Json), &t), None);
        let small = Tally { total: 10, ..t };
        assert_eq!(tally(form(Form::Lines), &small), None);
    }
}
