//! `strata modules` (Terraform 1.10+): every module call of the
//! configuration, as a tree under the root or (`-json`) a flat list, with
//! the version installed for a registry module and its constraint.

use crate::config::{self, installed::Manifest, Module};
use crate::diag::{Diag, Diags, Sources};
use serde_json::json;
use std::path::Path;

/// One module call, and the calls of the module it calls.
struct Record {
    key: String,
    source: String,
    version: Option<String>,
    constraint: Option<String>,
    children: Vec<Record>,
}

/// The tree (`json` false) or Terraform's JSON document.
pub fn modules(path: &Path, json: bool, sources: &mut Sources) -> Result<String, Diags> {
    let module = config::load(path, sources)?;
    let manifest = Manifest::read(path).map_err(|why| {
        Diags::from(Diag::new(
            "strata::modules::manifest",
            "Failed to refresh module manifest",
            why,
        ))
    })?;
    let records = records(&module, "", &manifest);
    Ok(match json {
        true => as_json(&records),
        false => as_tree(&records),
    })
}

/// `m`'s calls by name (Terraform sorts them), `prefix` the path of `m`.
fn records(m: &Module, prefix: &str, manifest: &Manifest) -> Vec<Record> {
    let mut calls: Vec<&config::ModuleCall> = m.module_calls.iter().collect();
    calls.sort_by(|a, b| a.name.cmp(&b.name));
    calls
        .into_iter()
        .map(|c| {
            let key = match prefix {
                "" => c.name.clone(),
                p => format!("{p}.{}", c.name),
            };
            // The source as init recorded it: normalised as Terraform
            // writes it (an absolute path is a `file://` address).
            let installed = manifest.modules.iter().find(|r| r.key == key);
            let version = installed.and_then(|r| r.version.clone());
            Record {
                key: c.name.clone(),
                source: installed.map_or_else(|| c.source.clone(), |r| r.source.clone()),
                constraint: c.version.as_ref().map(|v| v.constraint.clone()),
                children: records(&c.module, &key, manifest),
                version,
            }
        })
        .collect()
}

fn as_tree(records: &[Record]) -> String {
    if records.is_empty() {
        return "No modules found in configuration.\n".into();
    }
    let mut out = String::from("\nModules declared by configuration:\n.\n");
    branches(records, "", &mut out);
    out.push('\n');
    out
}

/// `"key"[source] VERSION (CONSTRAINT)`, the constraint left out when it
/// is the exact version.
fn branches(records: &[Record], indent: &str, out: &mut String) {
    for (i, r) in records.iter().enumerate() {
        let last = i + 1 == records.len();
        let mut item = format!("\"{}\"[{}]", r.key, r.source);
        if let Some(v) = &r.version {
            item.push_str(&format!(" {v}"));
            match &r.constraint {
                Some(c) if c.trim().trim_start_matches('=').trim() != v => {
                    item.push_str(&format!(" ({c})"))
                }
                _ => {}
            }
        }
        let (here, below) = super::providers::tree_edges(last);
        out.push_str(&format!("{indent}{here}{item}\n"));
        branches(&r.children, &format!("{indent}{below}"), out);
    }
}

/// Every call, depth first, as `{key, source, version}` (version "" for
/// one not from a registry); `modules` null when there are none.
fn as_json(records: &[Record]) -> String {
    fn flat(records: &[Record], out: &mut Vec<serde_json::Value>) {
        for r in records {
            out.push(json!({
                "key": r.key,
                "source": r.source,
                "version": r.version.clone().unwrap_or_default(),
            }));
            flat(&r.children, out);
        }
    }
    let mut all = Vec::new();
    flat(records, &mut all);
    let modules = match all.is_empty() {
        true => serde_json::Value::Null,
        false => serde_json::Value::Array(all),
    };
    let doc = json!({"format_version": "1.0", "modules": modules});
    format!("{doc}\n")
}
