//! Which serves each resource type of a provider strata has a native
//! driver for: the native driver, unless the configuration pins the
//! provider to its plugin (`strata = "plugin"` in `required_providers`),
//! its `provider` block sets an argument the native driver lacks (then
//! the plugin serves every type: a native driver cannot honour a
//! provider setting it does not know, such as `default_tags`), or a block
//! of the type sets an argument or nested block the native schema lacks,
//! the configuration reads an attribute of one that the native schema
//! lacks, or the native driver has no such type (then the plugin serves
//! that type, everywhere in the configuration). `strata = "native"` keeps the
//! native driver, whose schema then reports what it lacks.

use crate::builtin::{source_of, Drivers};
use crate::config::{Module, Resource, Serve};
use crate::syntax::ast::{Expr, ExprKind};
use crate::syntax::Body;
use std::collections::BTreeMap;
use strata_provider::{Driver, ResourceSchema};

/// Why a plugin serves something a native driver could.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Why {
    /// The provider's source address.
    pub source: String,
    pub reason: String,
}

/// The plugins a configuration needs beside the native drivers.
#[derive(Debug, Default)]
pub struct Serving {
    /// Providers whose every type the plugin serves.
    pub whole: BTreeMap<String, Why>,
    /// Types the plugin serves (data sources as `data.TYPE`).
    pub types: BTreeMap<String, Why>,
}

impl Serving {
    /// Decides for `roots` (a configuration, and the modules its test
    /// runs plan as roots) and every module they call.
    pub fn decide(roots: &[&Module], drivers: &Drivers) -> Serving {
        let mut out = Serving::default();
        for root in roots {
            let mut pinned = BTreeMap::new();
            collect_pins(root, &mut pinned);
            out.visit(root, drivers, &pinned);
        }
        // A provider the plugin serves whole needs no type listed.
        out.types
            .retain(|_, why| !out.whole.contains_key(&why.source));
        out
    }

    /// Whether `source`'s plugin is needed.
    pub fn needs(&self, source: &str) -> bool {
        self.whole.contains_key(source) || self.types.values().any(|w| w.source == source)
    }

    /// The types `source`'s plugin serves; `None` when it serves all.
    pub fn types_of(&self, source: &str) -> Option<Vec<String>> {
        if self.whole.contains_key(source) {
            return None;
        }
        let types = self.types.iter().filter(|(_, w)| w.source == source);
        Some(types.map(|(t, _)| t.clone()).collect())
    }

    fn visit(&mut self, m: &Module, drivers: &Drivers, pinned: &BTreeMap<String, Serve>) {
        for (source, serve) in pinned {
            if *serve == Serve::Plugin && native(drivers, source).is_some() {
                self.whole.entry(source.clone()).or_insert(Why {
                    source: source.clone(),
                    reason: "strata = \"plugin\" in required_providers".to_string(),
                });
            }
        }
        for p in &m.providers {
            let Some(driver) = crate::walk::block_driver(m, drivers, &p.name) else {
                continue;
            };
            let source = source_of(driver.as_ref());
            if pinned.get(&source) == Some(&Serve::Native) {
                continue;
            }
            if let Some(arg) = lacking(&p.body, &driver.provider_schema(), &["alias", "version"]) {
                self.whole.entry(source.clone()).or_insert(Why {
                    reason: format!("its provider block sets {arg}, which strata's driver lacks"),
                    source,
                });
            }
        }
        for r in &m.resources {
            let key = format!("{}{}", r.mode.prefix(), r.type_name);
            let native = drivers.of_mode(r.mode, &r.type_name);
            let why = match native {
                Some((driver, schema)) => {
                    let source = source_of(driver.as_ref());
                    if pinned.get(&source) == Some(&Serve::Native) {
                        continue;
                    }
                    let Some(arg) = lacking(&r.body, schema, &[]) else {
                        continue;
                    };
                    Why {
                        reason: format!("{} sets {arg}, which strata's driver lacks", r.address()),
                        source,
                    }
                }
                // A type of a natively served provider that the native
                // driver does not have at all.
                None => {
                    let Some(source) = source_for(m, &r.type_name, drivers) else {
                        continue;
                    };
                    Why {
                        reason: format!("strata's driver has no {}", r.type_name),
                        source,
                    }
                }
            };
            self.types.entry(key).or_insert(why);
        }
        self.read_attributes(m, drivers, pinned);
        for c in &m.module_calls {
            self.visit(&c.module, drivers, pinned);
        }
    }

    /// A resource's attribute the configuration reads that the native
    /// schema lacks (`aws_subnet.a.availability_zone_id`): the plugin
    /// serves the type, which has it.
    fn read_attributes(&mut self, m: &Module, drivers: &Drivers, pinned: &BTreeMap<String, Serve>) {
        for e in crate::config::deprecation::expressions(m) {
            e.visit_traversals(&mut |t| {
                let Some((r, attr)) = resource_attribute(m, t) else {
                    return;
                };
                let Some((driver, schema)) = drivers.of_mode(r.mode, &r.type_name) else {
                    return;
                };
                let source = source_of(driver.as_ref());
                let known =
                    schema.attributes.contains_key(attr) || schema.blocks.contains_key(attr);
                if known || pinned.get(&source) == Some(&Serve::Native) {
                    return;
                }
                let key = format!("{}{}", r.mode.prefix(), r.type_name);
                let reason = format!(
                    "{}.{attr} is read, which strata's driver lacks",
                    r.address()
                );
                self.types.entry(key).or_insert(Why { reason, source });
            });
        }
    }
}

/// The resource of `m` a traversal reads and the attribute it reads of
/// it: `TYPE.NAME[KEY].ATTR` or `data.TYPE.NAME.ATTR`.
fn resource_attribute<'m, 'e>(m: &'m Module, t: &'e Expr) -> Option<(&'m Resource, &'e str)> {
    let mut steps: Vec<Option<&str>> = Vec::new();
    let mut at = t;
    let root = loop {
        match &at.kind {
            ExprKind::GetAttr(inner, a) => {
                steps.push(Some(a.as_str()));
                at = inner;
            }
            ExprKind::Index(inner, _) => {
                steps.push(None);
                at = inner;
            }
            ExprKind::Variable(v) => break v.as_str(),
            _ => return None,
        }
    };
    steps.reverse();
    let (mode, rest) = match root {
        "data" => (crate::config::Mode::Data, &steps[..]),
        _ => (crate::config::Mode::Managed, &steps[..]),
    };
    let (type_name, rest) = match mode {
        crate::config::Mode::Data => (rest.first().copied().flatten()?, &rest[1..]),
        _ => (root, rest),
    };
    let name = rest.first().copied().flatten()?;
    // After the name, an instance key at most, then the attribute.
    let attr = match rest.get(1)? {
        Some(a) => a,
        None => rest.get(2).copied().flatten()?,
    };
    let r = m
        .resources
        .iter()
        .find(|r| r.mode == mode && r.type_name == type_name && r.name == name)?;
    Some((r, attr))
}

/// `strata = …` settings by full source address, from every module.
fn collect_pins(m: &Module, out: &mut BTreeMap<String, Serve>) {
    for p in &m.settings.provider_sources {
        if let Some(serve) = p.serve {
            out.insert(strata_state::provider_source(&p.source), serve);
        }
    }
    for c in &m.module_calls {
        collect_pins(&c.module, out);
    }
}

/// The native driver of `source`, if strata has one.
fn native<'d>(drivers: &'d Drivers, source: &str) -> Option<&'d std::sync::Arc<dyn Driver>> {
    drivers.all().find(|d| source_of(d.as_ref()) == source)
}

/// The provider source a type belongs to in module `m`, when strata has a
/// native driver for that provider: the source its prefix is declared
/// with, or `hashicorp/PREFIX`.
fn source_for(m: &Module, type_name: &str, drivers: &Drivers) -> Option<String> {
    let source = m.provider_source(type_name.split('_').next().unwrap_or(type_name));
    native(drivers, &source).map(|_| source)
}

/// The first argument or nested block `body` sets that `schema` lacks,
/// as a path (`ebs.throughput`); `skip` names meta-arguments.
fn lacking(body: &Body, schema: &ResourceSchema, skip: &[&str]) -> Option<String> {
    let known = |n: &str| {
        skip.contains(&n) || schema.attributes.contains_key(n) || schema.blocks.contains_key(n)
    };
    if let Some(a) = body.attrs.iter().find(|a| !known(&a.name)) {
        return Some(format!("`{}`", a.name));
    }
    for b in &body.blocks {
        // `dynamic "name" { content { … } }` is a `name` block.
        let (name, inner) = match (b.kind.as_str(), b.labels.first()) {
            ("dynamic", Some((label, _))) => {
                let content = b.body.blocks.iter().find(|c| c.kind == "content");
                (label.as_str(), content.map(|c| &c.body))
            }
            (kind, _) => (kind, Some(&b.body)),
        };
        match schema.blocks.get(name) {
            Some(nested) => {
                if let Some(path) = inner.and_then(|i| lacking(i, &nested.schema, &[])) {
                    return Some(format!("`{name}.{}", path.trim_start_matches('`')));
                }
            }
            None if skip.contains(&name) || schema.attributes.contains_key(name) => {}
            None => return Some(format!("`{name}` blocks")),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_provider::{AttributeSchema, BlockNesting};
    use strata_value::types::Type;

    fn schema() -> ResourceSchema {
        let mut s = ResourceSchema::of_attributes(vec![
            ("name", AttributeSchema::required(Type::String, "")),
            (
                "tags",
                AttributeSchema::optional(Type::map(Type::String), ""),
            ),
        ]);
        s.blocks.insert(
            "ebs".into(),
            strata_provider::values::block(
                BlockNesting::List,
                0,
                vec![("size", AttributeSchema::optional(Type::Number, ""))],
            ),
        );
        s
    }

    fn body(text: &str) -> Body {
        crate::config::resource_body(text)
    }

    #[test]
    fn an_attribute_read_is_found_with_its_resource() {
        let text = "resource \"aws_subnet\" \"a\" {\n  for_each = {}\n}\ndata \"aws_ami\" \"u\" {}\noutput \"z\" {\n  value = [aws_subnet.a[\"x\"].availability_zone_id, aws_subnet.a, data.aws_ami.u.id, var.v]\n}\n";
        let m = crate::config::load_text("t.tf", text, &mut Default::default()).unwrap();
        let mut found = Vec::new();
        m.outputs[0].expr.visit_traversals(&mut |t| {
            if let Some((r, attr)) = resource_attribute(&m, t) {
                found.push(format!("{}.{attr}", r.address()));
            }
        });
        assert_eq!(
            found,
            ["aws_subnet.a.availability_zone_id", "data.aws_ami.u.id"]
        );
    }

    #[test]
    fn the_first_argument_the_native_schema_lacks_is_named() {
        assert_eq!(
            lacking(&body("name = \"a\"\nebs {\n size = 1\n}"), &schema(), &[]),
            None
        );
        assert_eq!(
            lacking(&body("name = \"a\"\nregion = \"b\""), &schema(), &[]).as_deref(),
            Some("`region`")
        );
        assert_eq!(
            lacking(&body("ebs {\n throughput = 1\n}"), &schema(), &[]).as_deref(),
            Some("`ebs.throughput`")
        );
        assert_eq!(
            lacking(
                &body("dynamic \"ebs\" {\n for_each = []\n content {\n iops = 1\n }\n}"),
                &schema(),
                &[]
            )
            .as_deref(),
            Some("`ebs.iops`")
        );
        assert_eq!(
            lacking(&body("timeouts {\n create = \"1m\"\n}"), &schema(), &[]).as_deref(),
            Some("`timeouts` blocks")
        );
    }
}
