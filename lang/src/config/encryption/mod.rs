//! `terraform { encryption { … } }` (OpenTofu 1.7+): key providers,
//! methods, and the targets — `state`, `plan` — that name a method and its
//! fallbacks. Read with the configuration; evaluated once the root
//! module's variables it uses are known (OpenTofu evaluates it statically:
//! variables and locals, nothing a plan knows), into the methods
//! `strata_state::encryption` seals and opens with.

use super::blocks::{err, labels, unsupported_attr, unsupported_block};
use super::dynamic::{root_values, Given};
use super::{ConfigScope, Module, Run};
use crate::diag::{Diags, Sources, Span};
use crate::eval::Evaluator;
use crate::lang::value::Value;
use crate::syntax::ast::{Expr, ExprKind};
use crate::syntax::{Attribute, Block, Body};
use std::collections::BTreeSet;
use strata_state::encryption::{self as enc, KeyProvider, Method};

mod azure_vault;
mod keys;

const CODE: &str = "strata::config::encryption";

/// The `encryption` block as written.
#[derive(Debug, Clone)]
pub struct Encryption {
    pub key_providers: Vec<Named>,
    pub methods: Vec<Named>,
    pub state: Option<Target>,
    pub plan: Option<Target>,
    /// `remote_state_data_sources { … }`: how the states
    /// `terraform_remote_state` reads are opened.
    pub remote: Option<Remote>,
    pub span: Span,
}

/// `remote_state_data_sources`: the `default` target, and targets for
/// single data sources by the name OpenTofu gives them (`foo`, `foo[4]`,
/// `submod[1].bar` for `module.submod[1]`'s `bar`).
#[derive(Debug, Clone, Default)]
pub struct Remote {
    pub default: Option<Target>,
    pub named: Vec<(String, Target)>,
}

/// A `key_provider` or `method` block: its type, name, arguments and
/// nested blocks (`aws_kms`'s `endpoints`).
#[derive(Debug, Clone)]
pub struct Named {
    pub kind: String,
    pub name: String,
    pub attrs: Vec<Attribute>,
    pub blocks: Vec<Block>,
    pub span: Span,
}

/// A `state` or `plan` block, or a `fallback` inside one.
#[derive(Debug, Clone)]
pub struct Target {
    /// `method.TYPE.NAME`.
    pub method: Option<(String, String, Span)>,
    pub enforced: bool,
    pub fallback: Option<Box<Target>>,
    pub span: Span,
}

/// The evaluated chains: each target's method, then its fallbacks.
#[derive(Debug, Clone, Default)]
pub struct Sealings {
    state: Vec<Method>,
    plan: Vec<Method>,
    /// What opens the states `terraform_remote_state` reads, unless
    /// `named` has a chain for the data source.
    remote: Vec<Method>,
    named: std::collections::BTreeMap<String, Vec<Method>>,
    /// Why the chains could not be evaluated when the variables they use
    /// were not given: said by the command that needs them (one that opens
    /// the state or writes a plan), not by one that never does
    /// (`validate`, as Terraform's needs no values).
    unresolved: Option<Diags>,
}

impl Sealings {
    /// The state's chain (empty: not encrypted).
    pub fn state(&self) -> Result<&[Method], Diags> {
        self.ready().map(|()| self.state.as_slice())
    }

    /// The saved plan's chain.
    pub fn plan(&self) -> Result<&[Method], Diags> {
        self.ready().map(|()| self.plan.as_slice())
    }

    /// The chain that opens the states the `terraform_remote_state` data
    /// source `name` reads (its own target's, else the default's).
    pub fn remote(&self, name: &str) -> Result<&[Method], Diags> {
        self.ready()?;
        Ok(self.named.get(name).unwrap_or(&self.remote))
    }

    fn ready(&self) -> Result<(), Diags> {
        match &self.unresolved {
            Some(d) => Err(d.clone()),
            None => Ok(()),
        }
    }
}

const KEY_PROVIDERS: [&str; 6] = [
    "pbkdf2",
    "aws_kms",
    "gcp_kms",
    "azure_vault",
    "openbao",
    "external",
];
/// OpenTofu's other key providers: named so they are refused as not yet
/// here, not as unknown.
/// How many key providers a `chain` may pass through.
const MAX_CHAIN: usize = 8;

const LATER_KEY_PROVIDERS: [&str; 1] = ["azure_kms"];

pub(super) fn block(b: &Block, diags: &mut Diags) -> Encryption {
    body(&b.body, b.span, diags)
}

/// An `encryption` block's body: the configuration's, or `TF_ENCRYPTION`.
fn body(body: &Body, span: Span, diags: &mut Diags) -> Encryption {
    let mut out = Encryption {
        key_providers: Vec::new(),
        methods: Vec::new(),
        state: None,
        plan: None,
        remote: None,
        span,
    };
    for a in &body.attrs {
        diags.push(unsupported_attr(a, "encryption", &[]));
    }
    for nb in &body.blocks {
        match nb.kind.as_str() {
            "key_provider" | "method" => {
                let Some(l) = labels(nb, &["type", "name"], diags) else {
                    continue;
                };
                let named = Named {
                    kind: l[0].clone(),
                    name: l[1].clone(),
                    attrs: nb.body.attrs.clone(),
                    blocks: nb.body.blocks.clone(),
                    span: nb.span,
                };
                match nb.kind.as_str() {
                    "key_provider" => out.key_providers.push(named),
                    _ => out.methods.push(named),
                }
            }
            "state" | "plan" => {
                let t = Some(target(nb, true, diags));
                match nb.kind.as_str() {
                    "state" => out.state = t,
                    _ => out.plan = t,
                }
            }
            "remote_state_data_sources" => out.remote = remote(nb, diags),
            _ => diags.push(unsupported_block(
                nb,
                "an encryption block",
                &[
                    "key_provider",
                    "method",
                    "state",
                    "plan",
                    "remote_state_data_sources",
                ],
            )),
        }
    }
    out
}

/// OpenTofu's `TF_ENCRYPTION`: an `encryption` block's body in HCL, or in
/// JSON when it starts with `{`, laid over the configuration's.
fn from_environment(sources: &mut Sources, diags: &mut Diags) -> Option<Encryption> {
    let text = std::env::var("TF_ENCRYPTION").ok()?;
    let file = sources.add("TF_ENCRYPTION", text.clone());
    let parsed = match text.trim_start().starts_with('{') {
        true => crate::syntax::json::parse_json_file(
            file,
            &text,
            crate::syntax::json::JsonFile::Encryption,
        ),
        false => crate::syntax::parse_body(file, &text),
    };
    match parsed {
        Ok(b) => Some(body(&b, b.span, diags)),
        Err(d) => {
            diags.push(d);
            None
        }
    }
}

/// `over` laid over `base` as OpenTofu merges them: a key provider or
/// method of the same type and name takes `over`'s arguments over its
/// own, others are added; a target takes `over`'s method and fallback
/// where it gives them, and is enforced if either is.
fn merge(base: Option<Encryption>, over: Option<Encryption>) -> Option<Encryption> {
    let (mut base, over) = match (base, over) {
        (b, None) => return b,
        (None, o) => return o,
        (Some(b), Some(o)) => (b, o),
    };
    merge_named(&mut base.key_providers, over.key_providers);
    merge_named(&mut base.methods, over.methods);
    base.state = merge_target(base.state, over.state);
    base.plan = merge_target(base.plan, over.plan);
    base.remote = merge_remote(base.remote, over.remote);
    Some(base)
}

fn merge_remote(base: Option<Remote>, over: Option<Remote>) -> Option<Remote> {
    let (mut b, o) = match (base, over) {
        (b, None) => return b,
        (None, o) => return o,
        (Some(b), Some(o)) => (b, o),
    };
    b.default = merge_target(b.default, o.default);
    for (name, t) in o.named {
        match b.named.iter_mut().find(|(n, _)| *n == name) {
            Some((_, bt)) => {
                if let Some(m) = merge_target(Some(bt.clone()), Some(t)) {
                    *bt = m;
                }
            }
            None => b.named.push((name, t)),
        }
    }
    Some(b)
}

fn merge_named(base: &mut Vec<Named>, over: Vec<Named>) {
    for o in over {
        match base
            .iter_mut()
            .find(|b| b.kind == o.kind && b.name == o.name)
        {
            Some(b) => {
                for a in o.attrs {
                    b.attrs.retain(|x| x.name != a.name);
                    b.attrs.push(a);
                }
            }
            None => base.push(o),
        }
    }
}

fn merge_target(base: Option<Target>, over: Option<Target>) -> Option<Target> {
    let (b, o) = match (base, over) {
        (b, None) => return b,
        (None, o) => return o,
        (Some(b), Some(o)) => (b, o),
    };
    Some(Target {
        method: o.method.or(b.method),
        enforced: b.enforced || o.enforced,
        fallback: o.fallback.or(b.fallback),
        span: b.span,
    })
}

/// `remote_state_data_sources`: its `default` target and those named
/// for one data source each.
fn remote(b: &Block, diags: &mut Diags) -> Option<Remote> {
    for a in &b.body.attrs {
        diags.push(unsupported_attr(a, "remote_state_data_sources", &[]));
    }
    let mut out = Remote::default();
    for nb in &b.body.blocks {
        match nb.kind.as_str() {
            "default" => out.default = Some(target(nb, false, diags)),
            "remote_state_data_source" => {
                let Some(l) = labels(nb, &["name"], diags) else {
                    continue;
                };
                let name = l[0].clone();
                if out.named.iter().any(|(n, _)| *n == name) {
                    diags.push(err(
                        CODE,
                        "Duplicate remote_state_data_source block",
                        format!("A remote_state_data_source block for {name:?} was already given; each data source has one."),
                        nb.kind_span,
                    ));
                    continue;
                }
                out.named.push((name, target(nb, false, diags)));
            }
            _ => diags.push(unsupported_block(
                nb,
                "a remote_state_data_sources block",
                &["default", "remote_state_data_source"],
            )),
        }
    }
    Some(out)
}

fn target(b: &Block, top: bool, diags: &mut Diags) -> Target {
    let allowed: &[&str] = if top {
        &["method", "enforced"]
    } else {
        &["method"]
    };
    let mut t = Target {
        method: None,
        enforced: false,
        fallback: None,
        span: b.span,
    };
    for a in &b.body.attrs {
        match a.name.as_str() {
            "method" => t.method = reference(&a.expr, "method", diags),
            "enforced" if top => match &a.expr.kind {
                ExprKind::Literal(v) if v.as_bool().is_some() => {
                    t.enforced = v.as_bool().unwrap_or_default()
                }
                _ => diags.push(err(
                    CODE,
                    "Invalid \"enforced\"",
                    "\"enforced\" must be true or false.",
                    a.expr.span,
                )),
            },
            _ => diags.push(unsupported_attr(a, &b.kind, allowed)),
        }
    }
    for nb in &b.body.blocks {
        match nb.kind.as_str() {
            "fallback" if t.fallback.is_none() => {
                t.fallback = Some(Box::new(target(nb, false, diags)))
            }
            "fallback" => diags.push(err(
                CODE,
                "Duplicate fallback block",
                "Only one fallback block is allowed here; a fallback can have a fallback of its own.",
                nb.kind_span,
            )),
            _ => diags.push(unsupported_block(
                nb,
                &format!("a {} block", b.kind),
                &["fallback"],
            )),
        }
    }
    if t.method.is_none() {
        diags.push(err(
            CODE,
            "Missing method",
            format!(
                "A {} block needs a method: method = method.TYPE.NAME.",
                b.kind
            ),
            b.kind_span,
        ));
    }
    t
}

/// `ROOT.TYPE.NAME` (`method.aes_gcm.x`, `key_provider.pbkdf2.y`).
fn reference(e: &Expr, root: &str, diags: &mut Diags) -> Option<(String, String, Span)> {
    if let ExprKind::GetAttr(inner, name) = &e.kind {
        if let ExprKind::GetAttr(first, kind) = &inner.kind {
            if matches!(&first.kind, ExprKind::Variable(r) if r == root) {
                return Some((kind.clone(), name.clone(), e.span));
            }
        }
    }
    diags.push(err(
        CODE,
        &format!("Invalid {root} reference"),
        format!("Expected {root}.<type>.<name>."),
        e.span,
    ));
    None
}

/// The root module's encryption evaluated: its key providers built and
/// checked, each target's chain in order. Variables it uses are resolved
/// from what the command was given, as the command resolves them.
pub fn resolve(root: &Module, given: &Given, sources: &mut Sources) -> Result<Sealings, Diags> {
    let mut diags = Diags::default();
    let env = from_environment(sources, &mut diags);
    let merged = merge(root.settings.encryption.clone(), env);
    let Some(e) = &merged else {
        return diags.into_result(Sealings::default());
    };
    let used = variables_used(root, e);
    let values = match root_values(root, given, sources, |name| used.contains(name)) {
        Ok(v) => v,
        Err(d) => {
            return diags.into_result(Sealings {
                unresolved: Some(d),
                ..Sealings::default()
            })
        }
    };
    let run = Run::new(root.dir.clone(), "default");
    let vars = root
        .variables
        .iter()
        .map(|v| {
            let value = values.get(&v.name).cloned();
            (v.name.clone(), value.unwrap_or_else(Value::unknown))
        })
        .collect();
    let scope = ConfigScope::new(root, vars, run);
    let at = Evaluating {
        root,
        e,
        scope: &scope,
    };
    let mut diags = Diags::default();
    let sealings = Sealings {
        state: e
            .state
            .as_ref()
            .map(|t| at.chain(t, &mut diags))
            .unwrap_or_default(),
        plan: e
            .plan
            .as_ref()
            .map(|t| at.chain(t, &mut diags))
            .unwrap_or_default(),
        remote: e
            .remote
            .as_ref()
            .and_then(|r| r.default.as_ref())
            .map(|t| at.chain(t, &mut diags))
            .unwrap_or_default(),
        named: e
            .remote
            .iter()
            .flat_map(|r| &r.named)
            .map(|(name, t)| (name.clone(), at.chain(t, &mut diags)))
            .collect(),
        unresolved: None,
    };
    diags.into_result(sealings)
}

/// The variables the encryption block's arguments refer to, through
/// locals.
fn variables_used(root: &Module, e: &Encryption) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut pending: Vec<&Expr> = e
        .key_providers
        .iter()
        .chain(&e.methods)
        .flat_map(|n| n.attrs.iter().map(|a| &a.expr))
        .collect();
    while let Some(expr) = pending.pop() {
        expr.visit_references(&mut |r, attrs, _| {
            let Some(first) = attrs.first() else { return };
            match r {
                "var" => {
                    used.insert(first.to_string());
                }
                "local" => {
                    if let Some(l) = root.local(first) {
                        if seen.insert(first.to_string()) {
                            pending.push(&l.expr);
                        }
                    }
                }
                _ => {}
            }
        });
    }
    used
}

struct Evaluating<'a> {
    root: &'a Module,
    e: &'a Encryption,
    scope: &'a ConfigScope<'a>,
}

impl Evaluating<'_> {
    /// A target's method, then each fallback's, built.
    fn chain(&self, t: &Target, diags: &mut Diags) -> Vec<Method> {
        let mut out = Vec::new();
        let mut next = Some(t);
        while let Some(t) = next {
            match &t.method {
                Some(m) => out.extend(self.method(m, diags)),
                None => diags.push(err(
                    CODE,
                    "Missing method",
                    "A state, plan or fallback block needs a method: method = method.TYPE.NAME.",
                    t.span,
                )),
            }
            next = t.fallback.as_deref();
        }
        if t.enforced && matches!(out.first(), Some(Method::Unencrypted { .. })) {
            diags.push(err(
                CODE,
                "Unencrypted method is forbidden",
                "Unable to use the \"unencrypted\" method since the \"enforced\" flag is used.",
                t.span,
            ));
        }
        out
    }

    fn method(
        &self,
        (kind, name, span): &(String, String, Span),
        diags: &mut Diags,
    ) -> Option<Method> {
        let addr = format!("method.{kind}.{name}");
        let Some(m) = self
            .e
            .methods
            .iter()
            .find(|m| &m.kind == kind && &m.name == name)
        else {
            diags.push(err(
                CODE,
                "Undefined encryption method",
                format!("Can not find {addr:?}."),
                *span,
            ));
            return None;
        };
        match kind.as_str() {
            "unencrypted" => {
                for b in &m.blocks {
                    diags.push(unsupported_block(b, "a method block", &[]));
                }
                for a in &m.attrs {
                    diags.push(unsupported_attr(a, "method \"unencrypted\"", &[]));
                }
                Some(Method::Unencrypted { addr })
            }
            "aes_gcm" => self.aes_gcm(m, addr, diags),
            "external" => self.external(m, addr, diags),
            other => {
                diags.push(err(
                    CODE,
                    "Unknown encryption method type",
                    format!("Can not find {other:?}: the methods are aes_gcm, external and unencrypted."),
                    m.span,
                ));
                None
            }
        }
    }

    fn aes_gcm(&self, m: &Named, addr: String, diags: &mut Diags) -> Option<Method> {
        let mut keys = None;
        let mut aad = Vec::new();
        for a in &m.attrs {
            match a.name.as_str() {
                "keys" => keys = reference(&a.expr, "key_provider", diags),
                "aad" => aad = self.bytes(a, diags)?,
                _ => diags.push(unsupported_attr(a, "method \"aes_gcm\"", &["keys", "aad"])),
            }
        }
        let Some(keys) = keys else {
            diags.push(err(
                CODE,
                "Missing keys",
                "The aes_gcm method needs keys = key_provider.TYPE.NAME.",
                m.span,
            ));
            return None;
        };
        for b in &m.blocks {
            diags.push(unsupported_block(b, "a method block", &[]));
        }
        let keys = self.key_provider(&keys, diags)?;
        // An external program's key is checked when it gives one.
        let length = keys.kind.key_length();
        if let Some(problem) = length.and_then(enc::key_problem) {
            diags.push(err(
                CODE,
                "Unable to build encryption method",
                format!("{addr}: {problem}"),
                m.span,
            ));
            return None;
        }
        Some(Method::AesGcm { addr, keys, aad })
    }

    /// OpenTofu's `external` method: `encrypt_command` and
    /// `decrypt_command` (each a program and its arguments), `keys`
    /// optional.
    fn external(&self, m: &Named, addr: String, diags: &mut Diags) -> Option<Method> {
        let mut keys = None;
        let (mut encrypt, mut decrypt) = (None, None);
        for a in &m.attrs {
            let command = |diags: &mut Diags| {
                let value = self.value(a, diags)?;
                let s = keys::Setting {
                    name: a.name.clone(),
                    value,
                    span: a.expr.span,
                };
                keys::strings(&s, diags)
            };
            match a.name.as_str() {
                "keys" => keys = reference(&a.expr, "key_provider", diags),
                "encrypt_command" => encrypt = Some(command(diags)?),
                "decrypt_command" => decrypt = Some(command(diags)?),
                _ => diags.push(unsupported_attr(
                    a,
                    "method \"external\"",
                    &["keys", "encrypt_command", "decrypt_command"],
                )),
            }
        }
        for b in &m.blocks {
            diags.push(unsupported_block(b, "a method block", &[]));
        }
        let problem = |diags: &mut Diags, what: &str| {
            diags.push(err(
                CODE,
                "Unable to build encryption method",
                format!("{addr}: {what}"),
                m.span,
            ));
        };
        let (encrypt, decrypt) = match (encrypt, decrypt) {
            (Some(e), Some(d)) => (e, d),
            (None, _) => {
                problem(diags, "the encrypt_command option is required");
                return None;
            }
            (_, None) => {
                problem(diags, "the decrypt_command option is required");
                return None;
            }
        };
        for (name, command) in [("encrypt_command", &encrypt), ("decrypt_command", &decrypt)] {
            if command.first().is_none_or(String::is_empty) {
                problem(
                    diags,
                    &format!("the first entry of {name} must not be empty"),
                );
                return None;
            }
        }
        let keys = match keys {
            Some(k) => Some(self.key_provider(&k, diags)?),
            None => None,
        };
        Some(Method::External {
            addr,
            keys,
            run: enc::ExternalMethod { encrypt, decrypt },
        })
    }

    fn key_provider(
        &self,
        named: &(String, String, Span),
        diags: &mut Diags,
    ) -> Option<KeyProvider> {
        self.key_provider_chained(named, 0, diags)
    }

    /// A key provider, `depth` providers down a `chain`.
    fn key_provider_chained(
        &self,
        (kind, name, span): &(String, String, Span),
        depth: usize,
        diags: &mut Diags,
    ) -> Option<KeyProvider> {
        let addr = format!("key_provider.{kind}.{name}");
        let Some(k) = self
            .e
            .key_providers
            .iter()
            .find(|k| &k.kind == kind && &k.name == name)
        else {
            diags.push(err(
                CODE,
                "Undefined Key Provider",
                format!("Key provider {kind}.{name} is missing from the encryption configuration."),
                *span,
            ));
            return None;
        };
        if LATER_KEY_PROVIDERS.contains(&kind.as_str()) {
            diags.push(err(
                CODE,
                "Not supported yet",
                format!(
                    "strata does not use the {kind:?} key provider yet; it takes keys from {}.",
                    KEY_PROVIDERS.map(|k| format!("{k:?}")).join(" and ")
                ),
                k.span,
            ));
            return None;
        }
        if !KEY_PROVIDERS.contains(&kind.as_str()) {
            diags.push(err(
                CODE,
                "Unknown key_provider type",
                format!("Can not find {kind:?}."),
                k.span,
            ));
            return None;
        }
        let (chained, attrs): (Vec<&Attribute>, Vec<&Attribute>) = k
            .attrs
            .iter()
            .partition(|a| a.name == "chain" && kind == "pbkdf2");
        let chain = match chained.first() {
            Some(_) if depth >= MAX_CHAIN => {
                let detail = format!(
                    "{addr}: its chain of key providers loops, or is longer than {MAX_CHAIN}."
                );
                diags.push(err(CODE, "Invalid key provider chain", detail, k.span));
                return None;
            }
            Some(a) => {
                let upstream = reference(&a.expr, "key_provider", diags)?;
                Some(self.key_provider_chained(&upstream, depth + 1, diags)?)
            }
            None => None,
        };
        let attrs: Vec<Attribute> = attrs.into_iter().cloned().collect();
        let settings = self.settings(&attrs, diags)?;
        let mut endpoints = Vec::new();
        for b in &k.blocks {
            match (kind.as_str(), b.kind.as_str()) {
                ("aws_kms", "endpoints") => endpoints.extend(self.settings(&b.body.attrs, diags)?),
                _ => diags.push(unsupported_block(b, &format!("key_provider {kind:?}"), &[])),
            }
        }
        let given = keys::Given {
            kind,
            addr: &addr,
            settings: &settings,
            endpoints: &endpoints,
            chain,
            span: k.span,
        };
        let built = match kind.as_str() {
            "azure_vault" => azure_vault::build(&given, diags),
            _ => keys::build(&given, diags),
        }?;
        Some(KeyProvider {
            addr: built.alias.unwrap_or(addr),
            kind: built.kind,
        })
    }

    /// Arguments evaluated, each known and without its marks.
    fn settings(&self, attrs: &[Attribute], diags: &mut Diags) -> Option<Vec<keys::Setting>> {
        let mut out = Vec::new();
        for a in attrs {
            out.push(keys::Setting {
                name: a.name.clone(),
                value: self.value(a, diags)?,
                span: a.expr.span,
            });
        }
        Some(out)
    }

    fn value(&self, a: &Attribute, diags: &mut Diags) -> Option<Value> {
        match Evaluator::new(self.scope, self.root.dir.clone()).eval(&a.expr) {
            Ok(v) if v.is_wholly_known() => Some(v.unmarked().clone()),
            Ok(_) => {
                diags.push(err(CODE, "Unknown encryption setting", format!("The value of {:?} must be known before anything is planned: literal values, variables and locals made of them.", a.name), a.expr.span));
                None
            }
            Err(d) => {
                diags.push(d);
                None
            }
        }
    }

    fn bytes(&self, a: &Attribute, diags: &mut Diags) -> Option<Vec<u8>> {
        let v = self.value(a, diags)?;
        let items = v.elements().unwrap_or_default();
        let bytes: Option<Vec<u8>> = items
            .iter()
            .map(|i| {
                i.as_number()
                    .and_then(|n| n.to_i64())
                    .and_then(|n| u8::try_from(n).ok())
            })
            .collect();
        if v.elements().is_none() || bytes.is_none() {
            diags.push(keys::wrong_type(
                &a.name,
                a.expr.span,
                "a list of bytes (numbers 0 to 255)",
            ));
            return None;
        }
        bytes
    }
}
