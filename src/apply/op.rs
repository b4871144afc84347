//! What an operation of the apply does, which the runner carries out and
//! the progress lines name.

/// An operation's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Create,
    Update,
    Delete,
    Read,
    /// A new object's creation-time provisioners, run once it is recorded
    /// (they may use what the create made); said as part of its create.
    Provision,
}
