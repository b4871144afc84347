//! What drivers that work the way Terraform's provider plugins do need
//! beyond the create/update/delete calls of the native drivers: what they
//! keep beside each object (Terraform's "private" bytes, opaque to the
//! engine, and the object's identity; stored in state and handed back with
//! every later call), whole changes in one call with the configuration
//! beside the plan, and stored objects brought up to the current schema.

use strata_value::value::Value;

/// What a driver keeps beside an object, handed back with every later
/// call about it. Native drivers keep nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Kept {
    /// Terraform's "private" data: bytes only the driver reads.
    pub private: Vec<u8>,
    /// How the object is told apart (protocol 6.9's resource identity),
    /// when its type declares one. Boxed: most objects have none, and a
    /// `Kept` sits beside every object of a plan, twice in a change.
    pub identity: Option<Box<Identity>>,
}

impl Kept {
    /// Private bytes and no identity.
    pub fn bytes(private: Vec<u8>) -> Kept {
        Kept {
            private,
            identity: None,
        }
    }
}

/// A resource identity: an object of the attributes its type's identity
/// schema names, as JSON (how the state keeps it), and the version of
/// that schema it was written under.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    pub version: u64,
    pub value: serde_json::Value,
}

/// An object as stored: its attributes and what the driver keeps beside it.
#[derive(Debug, Clone)]
pub struct Stored {
    pub value: Value,
    pub kept: Kept,
}

/// One planned change of one instance, carried out in one call.
#[derive(Debug, Clone, Copy)]
pub struct ApplyRequest<'a> {
    pub type_name: &'a str,
    /// The object now; `None` when creating.
    pub prior: Option<&'a Value>,
    /// The object planned; `None` when deleting.
    pub planned: Option<&'a Value>,
    /// The configuration the plan was made from (null when deleting).
    pub config: &'a Value,
    /// What the plan's call kept beside the planned object (the planned
    /// identity with it).
    pub kept: &'a Kept,
}

/// A whole change that failed: why, and the object as the provider left
/// it (a provider may make an object and then fail to finish it); `None`
/// when it left nothing it could say.
#[derive(Debug)]
pub struct ApplyFailed {
    pub error: crate::DriverError,
    pub left: Option<Stored>,
}

/// A failure before anything could have changed leaves nothing.
impl From<crate::DriverError> for ApplyFailed {
    fn from(error: crate::DriverError) -> ApplyFailed {
        ApplyFailed { error, left: None }
    }
}

/// Where a driver's diagnostic points inside a resource's object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    Attribute(String),
    Key(String),
    Index(i64),
}

/// A problem a driver reports in a provider's words, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub error: bool,
    pub summary: String,
    pub detail: String,
    /// Inside the object (an argument of the block); empty for the whole.
    pub path: Vec<PathStep>,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary)?;
        if !self.path.is_empty() {
            write!(f, " (at {})", path_text(&self.path))?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// A path as the configuration would reach it: `ports[0].number`.
pub fn path_text(path: &[PathStep]) -> String {
    let mut out = String::new();
    for (i, s) in path.iter().enumerate() {
        match s {
            PathStep::Attribute(a) if i == 0 => out.push_str(a),
            PathStep::Attribute(a) => out.push_str(&format!(".{a}")),
            PathStep::Key(k) => out.push_str(&format!("[{k:?}]")),
            PathStep::Index(n) => out.push_str(&format!("[{n}]")),
        }
    }
    out
}

/// Problems as one line each, for an error's text.
pub fn problems_text(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(Problem::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// An object a `moved` block takes from one resource type (or provider)
/// to another, for the target type's driver to convert.
#[derive(Debug, Clone, Copy)]
pub struct MoveRequest<'a> {
    /// The provider that stored it, `registry.terraform.io/hashicorp/null`.
    pub source_provider: &'a str,
    pub source_type: &'a str,
    pub source_schema_version: u64,
    /// Its attributes, as the state's JSON text.
    pub source_json: &'a str,
    pub source_kept: &'a Kept,
    pub target_type: &'a str,
}
