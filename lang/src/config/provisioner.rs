//! A resource's `provisioner` and `connection` blocks, as Terraform 1.11
//! reads them: `local-exec`, `remote-exec` and `file`, each run after its
//! object is created (or, `when = destroy`, before it is destroyed), with
//! `on_failure` saying whether a failure fails the resource; `connection`
//! says how `remote-exec` and `file` reach the machine, on the resource
//! for all its provisioners or on one of them.

use super::Body;
use crate::diag::{Diag, Diags, Span};
use crate::lang::types::Type;
use crate::syntax::ast::{Expr, ExprKind, TemplatePart};
use crate::syntax::Block;
use strata_provider::{AttributeSchema, ResourceSchema};

/// What a provisioner does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProvisionerKind {
    /// A command on the machine strata runs on.
    LocalExec,
    /// Commands on the machine the connection reaches.
    RemoteExec,
    /// A file or directory copied to that machine.
    File,
}

/// When a provisioner runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// After its object is created (not when it is updated).
    Create,
    /// Before its object is destroyed.
    Destroy,
}

/// What a provisioner's failure does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// The resource fails: a new object is kept tainted, an object to be
    /// destroyed is kept.
    Fail,
    /// Said, and the resource goes on.
    Continue,
}

#[derive(Debug, Clone)]
pub struct Provisioner {
    pub kind: ProvisionerKind,
    pub when: When,
    pub on_failure: OnFailure,
    /// Its own arguments (`command`, `inline`, `source`…), `when` and
    /// `on_failure` taken out.
    pub body: Body,
    /// Its own `connection` block, which replaces the resource's.
    pub connection: Option<Body>,
    /// The block, for diagnostics ("with … on main.tf line N").
    pub span: Span,
}

impl ProvisionerKind {
    /// Terraform's name for it (the block's label).
    pub fn name(self) -> &'static str {
        match self {
            ProvisionerKind::LocalExec => "local-exec",
            ProvisionerKind::RemoteExec => "remote-exec",
            ProvisionerKind::File => "file",
        }
    }

    /// Its arguments, as Terraform's built-in provisioners declare them.
    pub fn schema(self) -> ResourceSchema {
        let string = || AttributeSchema::optional(Type::String, "");
        let strings = || AttributeSchema::optional(Type::list(Type::String), "");
        let attributes = match self {
            ProvisionerKind::LocalExec => vec![
                ("command", AttributeSchema::required(Type::String, "")),
                ("interpreter", strings()),
                ("working_dir", string()),
                (
                    "environment",
                    AttributeSchema::optional(Type::map(Type::String), ""),
                ),
                ("quiet", AttributeSchema::optional(Type::Bool, "")),
            ],
            ProvisionerKind::RemoteExec => vec![
                ("inline", strings()),
                ("script", string()),
                ("scripts", strings()),
            ],
            ProvisionerKind::File => vec![
                ("source", string()),
                ("content", string()),
                ("destination", AttributeSchema::required(Type::String, "")),
            ],
        };
        ResourceSchema::of_attributes(attributes)
    }
}

/// The arguments of a `connection` block (SSH; WinRM's are read so a
/// configuration for it validates, and refused when used).
pub fn connection_schema() -> ResourceSchema {
    let string = |name| (name, AttributeSchema::optional(Type::String, ""));
    let mut attributes = vec![
        ("host", AttributeSchema::required(Type::String, "")),
        ("port", AttributeSchema::optional(Type::Number, "")),
        ("agent", AttributeSchema::optional(Type::Bool, "")),
        ("https", AttributeSchema::optional(Type::Bool, "")),
        ("insecure", AttributeSchema::optional(Type::Bool, "")),
        ("use_ntlm", AttributeSchema::optional(Type::Bool, "")),
        ("bastion_port", AttributeSchema::optional(Type::Number, "")),
        ("proxy_port", AttributeSchema::optional(Type::Number, "")),
    ];
    attributes.extend(
        [
            "type",
            "user",
            "password",
            "private_key",
            "certificate",
            "host_key",
            "target_platform",
            "timeout",
            "script_path",
            "agent_identity",
            "bastion_host",
            "bastion_host_key",
            "bastion_user",
            "bastion_password",
            "bastion_private_key",
            "bastion_certificate",
            "proxy_scheme",
            "proxy_host",
            "proxy_user_name",
            "proxy_user_password",
            "cacert",
        ]
        .map(string),
    );
    ResourceSchema::of_attributes(attributes)
}

fn err(summary: &str, detail: impl Into<String>, span: Span) -> Diag {
    Diag::new("strata::config::provisioner", summary, detail).at(span)
}

/// The provisioners Terraform has removed, each named in its error.
const REMOVED: &[&str] = &["chef", "habitat", "puppet", "salt-masterless"];

/// One `provisioner "KIND" { … }` block; `None` (said) when it cannot be.
pub fn decode(b: Block, diags: &mut Diags) -> Option<Provisioner> {
    let Some((label, label_span)) = b.labels.first().cloned() else {
        diags.push(err(
            "Missing name for provisioner",
            "A provisioner block needs one label: the provisioner's type (local-exec, remote-exec or file).",
            b.kind_span,
        ));
        return None;
    };
    let kind = match label.as_str() {
        "local-exec" => ProvisionerKind::LocalExec,
        "remote-exec" => ProvisionerKind::RemoteExec,
        "file" => ProvisionerKind::File,
        removed if REMOVED.contains(&removed) => {
            diags.push(err(
                &format!("The {removed:?} provisioner has been removed"),
                format!("The {removed:?} provisioner was deprecated in Terraform 0.13.4 has been removed from Terraform. Use local-exec, remote-exec or file, or a tool meant for configuring machines."),
                b.span,
            ));
            return None;
        }
        other => {
            diags.push(err(
                "Missing required provisioner plugin",
                format!("This configuration requires provisioner plugin {other:?}, which isn't available. strata has the built-in provisioners local-exec, remote-exec and file."),
                label_span,
            ));
            return None;
        }
    };
    let mut p = Provisioner {
        kind,
        when: When::Create,
        on_failure: OnFailure::Fail,
        body: Body {
            attrs: Vec::new(),
            blocks: Vec::new(),
            span: b.body.span,
            json: b.body.json,
        },
        connection: None,
        span: b.span,
    };
    for a in b.body.attrs {
        match a.name.as_str() {
            "when" => match keyword(&a.expr).as_deref() {
                Some("create") => p.when = When::Create,
                Some("destroy") => p.when = When::Destroy,
                _ => diags.push(err(
                    "Invalid \"when\" keyword",
                    "The \"when\" argument requires one of the following keywords: create or destroy.",
                    a.expr.span,
                )),
            },
            "on_failure" => match keyword(&a.expr).as_deref() {
                Some("fail") => p.on_failure = OnFailure::Fail,
                Some("continue") => p.on_failure = OnFailure::Continue,
                _ => diags.push(err(
                    "Invalid \"on_failure\" keyword",
                    "The \"on_failure\" argument requires one of the following keywords: continue or fail.",
                    a.expr.span,
                )),
            },
            _ => p.body.attrs.push(a),
        }
    }
    for nb in b.body.blocks {
        match nb.kind.as_str() {
            "connection" if p.connection.is_none() => p.connection = Some(nb.body),
            "connection" => diags.push(err(
                "Duplicate connection block",
                "This provisioner already has a connection block.",
                nb.kind_span,
            )),
            _ => diags.push(err(
                "Unsupported block type",
                format!(
                    "Blocks of type {:?} are not expected in a provisioner.",
                    nb.kind
                ),
                nb.kind_span,
            )),
        }
    }
    if p.when == When::Destroy {
        only_self(&p.body, diags);
        if let Some(c) = &p.connection {
            only_self(c, diags);
        }
    }
    Some(p)
}

/// A bare keyword (`destroy`), or its quoted form as JSON writes it.
fn keyword(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Variable(n) => Some(n.clone()),
        ExprKind::Literal(v) => v.as_str().map(str::to_string),
        ExprKind::Template(parts) => match parts.as_slice() {
            [TemplatePart::Literal(s)] => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A destroy-time provisioner (and its connection) may use only its own
/// object: what else it names may be gone or changing by then.
pub fn only_self(body: &Body, diags: &mut Diags) {
    let mut check = |e: &Expr| {
        e.visit_references(&mut |root, _attrs, span| {
            if !matches!(root, "self" | "count" | "each" | "path" | "terraform") {
                diags.push(err(
                    "Invalid reference from destroy provisioner",
                    "Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency cycles and interact poorly with create_before_destroy.",
                    span,
                ));
            }
        });
    };
    for a in &body.attrs {
        check(&a.expr);
    }
    for b in &body.blocks {
        only_self(&b.body, diags);
    }
}
