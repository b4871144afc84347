//! `strata query` (Terraform 1.14): each `list` block of the query files
//! asks its provider for the objects it finds of a resource type, which
//! are shown by identity and, with `-generate-config-out`, written as
//! `resource` and `import { identity = … }` blocks to adopt them. Nothing
//! is planned, nothing changes, and the state is not read.

use super::session::Source;
use super::Options;
use crate::builtin::Drivers;
use crate::config::{ConfigScope, ListBlock, Module, Run};
use crate::diag::{Diag, Diags, Sources};
use crate::lang::value::{Attrs, Value};
use crate::plan::{Generated, ListFound, Queried};
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;
use strata_provider::{Driver, ListRequest, Listed as Found, ResourceSchema, TypeMode};
use strata_state::model::InstanceKey;

/// Terraform's default `limit`.
const DEFAULT_LIMIT: u64 = 100;

pub fn query(
    path: &Path,
    opts: &Options,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Queried, Diags> {
    let out = opts.generate_config_out.as_deref();
    if let Some(out) = out.filter(|o| o.exists()) {
        return Err(Diags::from(Diag::new(
            "strata::query::generate",
            "Target generated file already exists",
            format!("strata can only write generated config into a new file ({}). Either choose a different target location or move all existing configuration out of the target file, delete it and try again.", out.display()),
        )));
    }
    let from = Source {
        dir: path,
        vars: None,
        now: strata_provider::clock::now(),
    };
    let p = from.prepare(opts, sources, drivers)?;
    if p.lists.is_empty() {
        return Err(Diags::from(Diag::new(
            "strata::query::none",
            "No configuration files",
            "Query requires a query configuration to be present. Create a Terraform query configuration file (.tfquery.hcl file) and try again.",
        )));
    }
    let rt = crate::runtime::start(opts.parallelism)?;
    let site = Site {
        module: &p.module,
        vars: &p.vars,
        run: &p.run,
        drivers,
        rt: &rt,
        generate: out.is_some(),
    };
    // In the order the configuration's references make (each list after
    // those whose results its arguments use).
    let mut lists = Vec::new();
    let mut listed = Listed::default();
    let mut diags = Diags::default();
    for list in &p.lists {
        match site.list(list, &listed) {
            Ok(found) => {
                listed.add(list, &found);
                lists.extend(found.into_iter().map(|(_, f)| f));
            }
            Err(d) => diags.0.extend(d.0),
        }
    }
    let lists = diags.into_result(lists)?;
    let written = match out {
        Some(out) if lists.iter().any(|l| !l.generated.is_empty()) => {
            write(out, &lists)?;
            Some(out.to_path_buf())
        }
        _ => None,
    };
    Ok(Queried { lists, written })
}

/// `validate -query`: the query files read, and each list block's
/// provider and type found and its `config` block decoded by the list
/// schema (values it cannot know yet allowed), without asking anything.
pub fn validate_query(
    path: &Path,
    inputs: &[crate::config::variables::CliInput],
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let given = crate::config::dynamic::Given::with_environment(inputs.to_vec());
    let mut module = crate::config::load_given(path, sources, &given)?;
    let lists = crate::config::read_query_files(&mut module, sources)?;
    let run = Run::new(module.dir.clone(), "default");
    // What another list finds is not known until it is listed.
    let mut listed = Listed::default();
    for list in &lists {
        listed.unknown(list);
    }
    let mut diags = Diags::default();
    for list in &lists {
        let schema = match list_driver(drivers, list) {
            Ok((_, schema)) => schema,
            Err(d) => {
                diags.0.extend(d.0);
                continue;
            }
        };
        let mut scope = ConfigScope::new(&module, BTreeMap::new(), run.clone());
        scope.lists = Some(listed.value());
        // Any instance's: its key is not known here.
        if list.count.is_some() {
            scope.count_index = Some(Value::unknown());
        }
        if list.for_each.is_some() {
            scope.each = Some((Value::unknown(), Value::unknown()));
        }
        let mut ev = scope.evaluator();
        let empty = crate::syntax::Body {
            attrs: Vec::new(),
            blocks: Vec::new(),
            span: list.span,
            json: false,
        };
        crate::walk::decode(
            list.config.as_ref().unwrap_or(&empty),
            schema,
            &mut ev,
            list.span,
            &mut diags,
        );
    }
    diags.into_result(())
}

/// The driver a list block's `provider` names (configured where it is)
/// and its type's list schema.
fn list_driver<'d>(
    drivers: &'d Drivers,
    list: &ListBlock,
) -> Result<(std::sync::Arc<dyn Driver>, &'d ResourceSchema), Diags> {
    let missing = |detail: String| {
        Diags::from(
            Diag::new("strata::query::type", "Invalid list resource type", detail).at(list.span),
        )
    };
    let Some(base) = drivers.named(&list.provider.name) else {
        return Err(missing(format!(
            "There is no provider {:?} in this configuration.",
            list.provider.name
        )));
    };
    let address = crate::builtin::provider_address(&**base, list.provider.alias.as_deref());
    let driver = drivers.by_address(&address).unwrap_or_else(|| base.clone());
    let Some(schema) = base.schema(TypeMode::List, &list.type_name) else {
        return Err(missing(format!(
            "The provider {} does not support list resource type {:?}.",
            crate::builtin::source_of(base.as_ref()),
            list.type_name
        )));
    };
    Ok((driver, schema))
}

/// What the list blocks are evaluated and served with.
struct Site<'a> {
    module: &'a Module,
    vars: &'a BTreeMap<String, Value>,
    run: &'a Rc<Run>,
    drivers: &'a Drivers,
    rt: &'a tokio::runtime::Runtime,
    generate: bool,
}

impl Site<'_> {
    /// Every instance of `list` (one, or one per `count` or `for_each`
    /// element), listed, by key; `listed` is what the lists before it found.
    fn list(
        &self,
        list: &ListBlock,
        listed: &Listed,
    ) -> Result<Vec<(Option<InstanceKey>, ListFound)>, Diags> {
        let (driver, schema) = list_driver(self.drivers, list)?;
        let mut out = Vec::new();
        for (key, scope) in self.instances(list, listed)? {
            let address = format!(
                "list.{}.{}{}",
                list.type_name,
                list.name,
                key.as_ref().map(|k| k.to_string()).unwrap_or_default()
            );
            out.push((key, self.one(list, (&*driver, schema), scope, address)?));
        }
        Ok(out)
    }

    /// The scope of each instance of `list`, by key.
    fn instances(
        &self,
        list: &ListBlock,
        listed: &Listed,
    ) -> Result<Vec<(Option<InstanceKey>, ConfigScope<'_>)>, Diags> {
        let scope = || {
            let mut s = ConfigScope::new(self.module, self.vars.clone(), self.run.clone());
            s.lists = Some(listed.value());
            s
        };
        let value = |e: &crate::syntax::ast::Expr| {
            scope().evaluator().eval(e).map(|v| v.unmarked().clone())
        };
        if let Some(count) = &list.count {
            let n = value(count)?
                .as_number()
                .and_then(|n| n.to_i64())
                .filter(|n| *n >= 0);
            let n = n.ok_or_else(|| Diag::new("strata::query::count", "Invalid count argument", "The given \"count\" argument value is unsuitable: a whole number, zero or more, known before the query is required.").at(count.span))?;
            return Ok((0..n)
                .map(|i| {
                    let mut s = scope();
                    s.count_index = Some(Value::int(i));
                    (Some(InstanceKey::Int(i.unsigned_abs())), s)
                })
                .collect());
        }
        if let Some(each) = &list.for_each {
            let elements = crate::plan::for_each_elements(&value(each)?, each.span)?;
            return Ok(elements
                .into_iter()
                .map(|(k, v)| {
                    let key = InstanceKey::Str(k.as_str().unwrap_or_default().to_string());
                    let mut s = scope();
                    s.each = Some((k, v));
                    (Some(key), s)
                })
                .collect());
        }
        Ok(vec![(None, scope())])
    }

    /// One instance: its config, limit and include_resource evaluated,
    /// the provider asked.
    fn one(
        &self,
        list: &ListBlock,
        (driver, schema): (&dyn Driver, &ResourceSchema),
        scope: ConfigScope<'_>,
        address: String,
    ) -> Result<ListFound, Diags> {
        let mut ev = scope.evaluator();
        let unknown = ("strata::query::config", "Invalid list configuration");
        let config =
            crate::walk::decode_known(list.config.as_ref(), schema, &mut ev, list.span, unknown)?;
        let limit = match &list.limit {
            None => DEFAULT_LIMIT,
            Some(e) => {
                let n = ev.eval(e)?.unmarked().as_number().and_then(|n| n.to_i64());
                let n = n.and_then(|n| u64::try_from(n).ok());
                n.ok_or_else(|| Diag::new("strata::query::limit", "Invalid limit argument", "The given \"limit\" argument value is unsuitable: must be greater than or equal to zero.").at(e.span))?
            }
        };
        let include = match &list.include_resource {
            None => false,
            Some(e) => matches!(ev.eval(e)?.unmarked(), Value::Bool(true)),
        };
        let req = ListRequest {
            type_name: &list.type_name,
            config: &config,
            include_resource: include || self.generate,
            limit,
        };
        let found = self.rt.block_on(driver.list(req)).map_err(|e| {
            Diag::new(
                "strata::query::list",
                format!("Listing {address} failed"),
                e.to_string(),
            )
            .at(list.span)
        })?;
        let identity_version = driver
            .identity_schema(&list.type_name)
            .map_or(0, |s| s.version);
        let generated = match self.generate {
            true => generated(list, &list.provider, &found, self.drivers)?,
            false => Vec::new(),
        };
        Ok(ListFound {
            address,
            type_name: list.type_name.clone(),
            config,
            identity_version,
            found,
            generated,
        })
    }
}

/// A `resource` block and an `import` block by identity for each object
/// found, named `NAME_INDEX` as Terraform names them.
fn generated(
    list: &ListBlock,
    provider: &crate::config::ProviderRef,
    found: &[Found],
    drivers: &Drivers,
) -> Result<Vec<Generated>, Diags> {
    let Some((_, schema)) = drivers.resource(&list.type_name) else {
        return Err(Diag::new(
            "strata::query::generate",
            "Invalid resource type",
            format!(
                "No driver of this strata build provides the resource type {:?}.",
                list.type_name
            ),
        )
        .at(list.span)
        .into());
    };
    let local = match &provider.alias {
        Some(a) => format!("{}.{a}", provider.name),
        None => provider.name.clone(),
    };
    let mut out = Vec::new();
    for (i, f) in found.iter().enumerate() {
        let name = format!("{}_{i}", list.name);
        let object = f.object.clone().unwrap_or(Value::null());
        let resource =
            crate::render::config::listed_resource(&list.type_name, &name, &local, &object, schema);
        let import = crate::render::config::identity_import(
            &format!("{}.{name}", list.type_name),
            &local,
            &f.identity,
        );
        out.push(Generated { resource, import });
    }
    Ok(out)
}

/// The generated blocks, in a new file, as Terraform writes them.
fn write(out: &Path, lists: &[ListFound]) -> Result<(), Diags> {
    let mut text = crate::render::config::HEADER.to_string();
    for g in lists.iter().flat_map(|l| &l.generated) {
        text.push('\n');
        text.push_str(&g.resource);
        text.push('\n');
        text.push_str(&g.import);
    }
    std::fs::write(out, text).map_err(|e| {
        Diags::from(Diag::new(
            "strata::query::generate",
            "Cannot write the generated configuration",
            format!("{}: {e}", out.display()),
        ))
    })
}

/// What the lists listed so far found, as a later list's `list.T.N`
/// reads it: per instance `{ data = [{ display_name, state, identity }…],
/// config }` as Terraform's provider client makes it; a tuple of those
/// for `count`, an object by key for `for_each`.
#[derive(Default)]
struct Listed {
    by_type: BTreeMap<String, Attrs>,
}

impl Listed {
    fn add(&mut self, list: &ListBlock, found: &[(Option<InstanceKey>, ListFound)]) {
        let instance = |f: &ListFound| {
            let data = f.found.iter().map(|r| {
                Value::Object(Attrs::from([
                    (
                        "display_name".to_string(),
                        Value::string(r.display_name.as_str()),
                    ),
                    (
                        "state".to_string(),
                        r.object.clone().unwrap_or_else(Value::null),
                    ),
                    (
                        "identity".to_string(),
                        crate::funcs::json_value(&r.identity).unwrap_or_else(|_| Value::null()),
                    ),
                ]))
            });
            Value::Object(Attrs::from([
                ("data".to_string(), Value::Tuple(data.collect())),
                ("config".to_string(), f.config.clone()),
            ]))
        };
        let value = match (&list.count, &list.for_each) {
            (Some(_), _) => Value::Tuple(found.iter().map(|(_, f)| instance(f)).collect()),
            (_, Some(_)) => Value::Object(
                found
                    .iter()
                    .filter_map(|(k, f)| match k {
                        Some(InstanceKey::Str(k)) => Some((k.clone(), instance(f))),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => found
                .first()
                .map(|(_, f)| instance(f))
                .unwrap_or_else(Value::unknown),
        };
        self.set(list, value);
    }

    /// `list`'s results as not known yet (`validate -query`).
    fn unknown(&mut self, list: &ListBlock) {
        self.set(list, Value::unknown());
    }

    fn set(&mut self, list: &ListBlock, value: Value) {
        self.by_type
            .entry(list.type_name.clone())
            .or_default()
            .insert(list.name.clone(), value);
    }

    fn value(&self) -> Value {
        Value::Object(
            self.by_type
                .iter()
                .map(|(t, names)| (t.clone(), Value::Object(names.clone())))
                .collect(),
        )
    }
}
