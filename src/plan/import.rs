//! `import` blocks: the objects they adopt, read by id (or, Terraform
//! 1.12, by identity) through their drivers before the resources they go
//! to are planned. A block with
//! `for_each` names one object per element (`each.key` and `each.value`
//! in `to`'s keys and in `id`, Terraform 1.7); a block in a child module
//! (Terraform 1.16) names objects of that module, once per instance of
//! it, its expressions evaluated there.

use super::diff;
use super::refresh::PriorInstance;
use crate::builtin::Drivers;
use crate::config::{Import, ImportExpr, Module, Run};
use crate::diag::{Diag, Diags, Span};
use crate::lang::value::Value;
use crate::syntax::ast::Expr;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;
use strata_provider::{Driver, IdentitySchema, ImportBy, ResourceSchema};
use strata_state::model::{Address, ModulePath};

/// One object an import block names: where it goes and what it is
/// found by.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub to: Address,
    pub by: Wanted,
    /// The block.
    pub span: Span,
}

/// What an import block finds its object by, as evaluated: an identity
/// is typed by its resource type's identity schema once the driver is
/// known.
#[derive(Debug, Clone)]
pub(super) enum Wanted {
    Id(String),
    Identity(Value, Span),
}

/// What `each` is in one element of an import's `for_each`: its key and
/// value.
pub(super) type Each = (Value, Value);

/// Evaluates an expression of an import block where the block is, with
/// `each` set for one element of its `for_each`.
pub(super) type Eval<'e> = dyn Fn(&Expr, Option<&Each>) -> Result<Value, Diag> + 'e;

/// The objects `im` (a block of module instance `module`) names.
pub(super) fn targets(
    im: &Import,
    module: &ModulePath,
    eval: &Eval<'_>,
) -> Result<Vec<Target>, Diags> {
    let each: Vec<Option<Each>> = match &im.for_each {
        None => vec![None],
        Some(e) => elements(&eval(e, None)?, e.span)?
            .into_iter()
            .map(Some)
            .collect(),
    };
    let mut out = Vec::new();
    let mut diags = Diags::default();
    for each in &each {
        let mut failed = None;
        let text = im
            .to
            .address_text_by(&mut |k| match eval(k, each.as_ref()) {
                Ok(v) if v.is_wholly_known() => Some(v),
                Ok(_) => None,
                Err(d) => {
                    failed = Some(d);
                    None
                }
            });
        if let Some(d) = failed {
            diags.push(d);
            continue;
        }
        let inside = |t: String| match module.is_root() {
            true => t,
            false => format!("{module}.{t}"),
        };
        let Some(to) = text.map(inside).and_then(|t| Address::parse(&t)) else {
            diags.push(
                Diag::new(
                    "strata::plan::import",
                    "Invalid import address",
                    "\"to\" must name one resource instance, like aws_vpc.main or aws_subnet.a[\"x\"] (with for_each, aws_subnet.a[each.key]).",
                )
                .at(im.to.span),
            );
            continue;
        };
        let expr = im.by.expr();
        let by = match &im.by {
            ImportExpr::Id(_) => id_of(eval(expr, each.as_ref()), expr.span).map(Wanted::Id),
            ImportExpr::Identity(_) => {
                eval(expr, each.as_ref()).map(|v| Wanted::Identity(v, expr.span))
            }
        };
        match by {
            Ok(by) => out.push(Target {
                to,
                by,
                span: im.span,
            }),
            Err(d) => diags.push(d),
        }
    }
    diags.into_result(out)
}

/// The id an `import` block gives: a string known before apply.
pub(super) fn id_of(v: Result<Value, Diag>, span: Span) -> Result<String, Diag> {
    match v?.unmarked() {
        Value::String(s) => Ok(s.clone()),
        _ => Err(Diag::new(
            "strata::plan::import",
            "Invalid import id",
            "The import id must be a string known before apply.",
        )
        .at(span)),
    }
}

/// The elements of an import's `for_each`: a map's or object's by key, a
/// list's or tuple's by index, a set's by value, as Terraform takes them.
pub(super) fn elements(v: &Value, span: Span) -> Result<Vec<Each>, Diag> {
    let unsuitable = |why: &str| {
        Diag::new(
            "strata::plan::import_for_each",
            "Invalid for_each argument",
            format!("The given \"for_each\" argument value is unsuitable: {why}."),
        )
        .at(span)
    };
    if !v.is_wholly_known() {
        return Err(unsuitable("an import's for_each must be known when planning, and this one uses values known only after apply"));
    }
    match v.unmarked() {
        Value::Map(_, items) | Value::Object(items) => Ok(items
            .iter()
            .map(|(k, v)| (Value::string(k.clone()), v.clone()))
            .collect()),
        Value::List(_, items) | Value::Tuple(items) => Ok(items
            .iter()
            .enumerate()
            .map(|(i, v)| (Value::int(i as i64), v.clone()))
            .collect()),
        Value::Set(_, items) => Ok(items.iter().map(|v| (v.clone(), v.clone())).collect()),
        Value::Null(_) => Err(unsuitable(
            "the given \"for_each\" argument value is null. A map, set or list is allowed",
        )),
        _ => Err(unsuitable("a map, set or list is allowed")),
    }
}

/// A second import block for one object, in Terraform's words.
pub(super) fn duplicate(t: &Target, first: Span) -> Diag {
    let to = t.to.to_string();
    Diag::new(
        "strata::plan::import",
        format!("Duplicate import configuration for {to:?}"),
        format!("An import block for the resource {to:?} was already declared. A resource can have only one import block."),
    )
    .at(t.span)
    .also("the first import block for it", first)
}

/// Reads `t`'s object through `driver`: the prior instance it becomes,
/// what the schema calls sensitive marked as in any object read back.
pub(super) fn adopt(
    (driver, provider, schema): (&dyn Driver, &str, &ResourceSchema),
    t: &Target,
    rt: &tokio::runtime::Runtime,
) -> Result<PriorInstance, Diag> {
    let addr = t.to.to_string();
    let by = import_by(driver, &t.to.id.type_name, &t.by)?;
    match rt.block_on(driver.import_object(&t.to.id.type_name, &by)) {
        Ok(Some(found)) => Ok(PriorInstance {
            addr: t.to.clone(),
            deposed: None,
            provider: provider.to_string(),
            value: diff::with_marks(found.value, None, schema),
            schema_version: schema.version,
            kept: found.kept,
            dependencies: Vec::new(),
            create_before_destroy: false,
            skip_destroy: false,
            tainted: false,
            as_stored: None,
            held: None,
        }),
        Ok(None) => Err(Diag::new(
            "strata::plan::import",
            "Cannot import non-existent remote object",
            format!("While attempting to import an existing object to {addr:?}, the driver found no object with the {}.", by_text(&by)),
        )
        .at(t.span)),
        Err(e) => Err(Diag::new("strata::plan::import", format!("Importing {addr} failed"), e.to_string()).at(t.span)),
    }
}

/// The import id or identity `t` names its object by, an identity typed
/// by `type_name`'s identity schema as Terraform types it: attributes not
/// required for import may be left out; wholly known, not null, nothing
/// sensitive in it.
pub(super) fn import_by(
    driver: &dyn Driver,
    type_name: &str,
    by: &Wanted,
) -> Result<ImportBy, Diag> {
    let (v, span) = match by {
        Wanted::Id(id) => return Ok(ImportBy::Id(id.clone())),
        Wanted::Identity(v, span) => (v, *span),
    };
    let invalid =
        |summary: &str, detail: String| Diag::new("strata::plan::import", summary, detail).at(span);
    let Some(schema) = driver.identity_schema(type_name) else {
        return Err(no_identity(type_name, span));
    };
    if v.contains_sensitive() {
        return Err(invalid(
            "Invalid import identity",
            format!("Import identity for {type_name} must not contain sensitive values"),
        ));
    }
    identity_json(v, schema)
        .map(|i| ImportBy::Identity(Box::new(i)))
        .map_err(|detail| invalid("Invalid import identity argument", detail))
}

/// An import by identity of a type that declares none.
pub(super) fn no_identity(type_name: &str, span: Span) -> Diag {
    Diag::new(
        "strata::plan::import",
        "Invalid import identity argument",
        format!("The resource type {type_name:?} has no identity schema: its provider does not support import by identity. Give the object's \"id\" instead."),
    )
    .at(span)
}

/// An `identity` value as the JSON object of its schema's type.
fn identity_json(v: &Value, schema: &IdentitySchema) -> Result<serde_json::Value, String> {
    if v.is_null() {
        return Err("The import identity cannot be null.".into());
    }
    if !v.is_wholly_known() {
        return Err("The import block \"identity\" argument depends on resource attributes that cannot be determined until apply, so Terraform cannot plan to import this resource.".into());
    }
    let converted = crate::lang::convert::convert(v, &schema.import_type())
        .map_err(|e| format!("The import identity is unsuitable: {e}."))?;
    crate::lang::json::value_to_json(&converted, &schema.object_type())
}

/// What an import looked for, for its messages.
pub fn by_text(by: &ImportBy) -> String {
    match by {
        ImportBy::Id(id) => format!("id {id:?}"),
        ImportBy::Identity(json) => format!("identity {}", identity_text(json)),
    }
}

/// An identity as Terraform's messages show it: `key=value` pairs by key.
pub fn identity_text(json: &serde_json::Value) -> String {
    let Some(o) = json.as_object() else {
        return "<null>".into();
    };
    let mut keys: Vec<&String> = o.keys().collect();
    keys.sort();
    keys.iter()
        .map(|k| match &o[*k] {
            serde_json::Value::Null => format!("{k}=<null>"),
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// What each import found its object by, by address, with the block that
/// gave it.
pub(super) type Imported = HashMap<Address, (ImportBy, Span)>;

/// What the root's import blocks are read against.
pub(super) struct Site<'r> {
    pub root: &'r Module,
    pub vars: &'r BTreeMap<String, Value>,
    pub run: &'r Rc<Run>,
    pub drivers: &'r Drivers,
}

/// Objects the root module's `import` blocks adopt (each that `adopts`
/// accepts: not in the state yet and in the plan's scope), and per
/// address, the id.
pub(super) fn root_imports(
    site: &Site<'_>,
    adopts: &dyn Fn(&Address) -> bool,
    rt: &tokio::runtime::Runtime,
) -> Result<(Vec<PriorInstance>, Imported), Diags> {
    let mut adopted = Vec::new();
    let mut ids = HashMap::new();
    let mut diags = Diags::default();
    let eval = |e: &Expr, each: Option<&Each>| {
        let mut scope =
            crate::config::ConfigScope::new(site.root, site.vars.clone(), site.run.clone());
        scope.each = each.cloned();
        scope.evaluator().eval(e)
    };
    let mut seen: HashMap<Address, Span> = HashMap::new();
    for im in &site.root.imports {
        let found = targets(im, &ModulePath::root(), &eval);
        for t in found.unwrap_or_else(|d| {
            diags.0.extend(d.0);
            Vec::new()
        }) {
            if let Some(first) = seen.get(&t.to) {
                diags.push(duplicate(&t, *first));
                continue;
            }
            seen.insert(t.to.clone(), t.span);
            if !adopts(&t.to) {
                continue;
            }
            let found = driver_for(site, &t.to, im.to.span).and_then(|(d, provider, schema)| {
                let by = import_by(d.as_ref(), &t.to.id.type_name, &t.by)?;
                let p = adopt((d.as_ref(), &provider, schema), &t, rt)?;
                Ok((p, by))
            });
            match found {
                Ok((p, by)) => {
                    ids.insert(t.to.clone(), (by, t.span));
                    adopted.push(p);
                }
                Err(d) => diags.push(d),
            }
        }
    }
    diags.into_result((adopted, ids))
}

/// The driver an `import` block reads its object through: the one the
/// configuration of the resource it goes to resolves to (which cluster,
/// region or account to look in), its provider address and the schema.
fn driver_for<'r>(
    site: &Site<'r>,
    to: &Address,
    span: Span,
) -> Result<(Arc<dyn Driver>, String, &'r ResourceSchema), Diag> {
    let Some((driver, schema)) = site.drivers.resource(&to.id.type_name) else {
        return Err(Diag::new(
            "strata::plan::import",
            "Invalid resource type",
            format!(
                "No driver of this strata build provides the resource type {:?}.",
                to.id.type_name
            ),
        )
        .at(span));
    };
    let config_addr = to.id.config();
    let provider = match site.root.resource_at(&config_addr) {
        Some(r) => crate::walk::resolve(site.root, &config_addr.module, r, driver.as_ref())?
            .instance_in_root(site.root, (site.vars, site.run), to, site.drivers)?,
        None => driver.provider_address(),
    };
    let driver = site
        .drivers
        .configured(
            &to.id.type_name,
            &provider,
            strata_state::model::Mode::Managed,
        )
        .map_or_else(|| driver.clone(), |(d, _)| d);
    Ok((driver, provider, schema))
}

/// What the import blocks of module instance `path` name of resource `r`
/// there, evaluated in that instance (its variables, locals, and what
/// its walk has made known so far).
pub(super) fn module_targets(
    walk: &crate::walk::Walk<'_>,
    root: &Module,
    path: &ModulePath,
    r: &crate::config::Resource,
) -> Result<Vec<Target>, Diags> {
    let config = path.without_keys();
    let Some(module) = root.module_at(&config) else {
        return Ok(Vec::new());
    };
    let eval = |e: &Expr, each: Option<&Each>| {
        walk.eval_module_each(&config, path, each.cloned(), |ev| ev.eval(e))
            .unwrap_or_else(|| Ok(Value::unknown()))
    };
    let mut out = Vec::new();
    let mut diags = Diags::default();
    for im in module.imports.iter().filter(|im| im.names(r)) {
        match targets(im, path, &eval) {
            Ok(found) => out.extend(found),
            Err(d) => diags.0.extend(d.0),
        }
    }
    diags.into_result(out)
}
