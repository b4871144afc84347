//! What an operation of the apply does, which the runner carries out and
//! the progress lines name.

/// An operation's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Create,
    Update,
    Delete,
    Read,
    /// A new object's creation-time provisioners and the actions after
    /// its create, run once it is recorded (they may use what the create
    /// made); said as part of its create.
    Provision,
    /// The actions after an update, said as part of it.
    AfterUpdate,
}

impl OpKind {
    /// Whether the op follows a driver call that made its object.
    pub fn follows(self) -> bool {
        matches!(self, OpKind::Provision | OpKind::AfterUpdate)
    }
}
