//! Query files (`*.tfquery.hcl`, Terraform 1.14): `list` blocks, each
//! asking a provider for the objects it has of a resource type, and the
//! `provider`, `variable` and `locals` blocks they need, which join the
//! root module's. Only `query` reads them; every other command leaves
//! them alone, as Terraform does.

mod refs;

use super::blocks::{config_body, Configured};
use super::decode::{err, keyless_provider_ref, labels, module_body, unsupported_attr};
use super::{Module, ProviderRef};
use crate::diag::{Diag, Diags, Sources, Span};
use crate::syntax::ast::Expr;
use crate::syntax::{Block, Body};
use std::collections::HashMap;
use std::path::Path;

/// `list "TYPE" "NAME" { provider = …  config { … } }`.
#[derive(Debug, Clone)]
pub struct ListBlock {
    pub type_name: String,
    pub name: String,
    pub provider: ProviderRef,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    /// Whether each result carries the whole object (false by default).
    pub include_resource: Option<Expr>,
    /// The most results (100 by default).
    pub limit: Option<Expr>,
    /// The `config` block: what the provider filters by.
    pub config: Option<Body>,
    pub span: Span,
}

const ALLOWED: [&str; 5] = ["provider", "count", "for_each", "include_resource", "limit"];

/// The query files directly in `dir`, in name order.
pub fn query_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| !n.starts_with('.') && n.ends_with(".tfquery.hcl"))
        })
        .collect();
    files.sort();
    files
}

/// Reads the query files of `m`'s directory: their `provider`,
/// `variable` and `locals` blocks into `m`, their `list` blocks returned.
pub fn read_query_files(m: &mut Module, sources: &mut Sources) -> Result<Vec<ListBlock>, Diags> {
    let mut diags = Diags::default();
    let mut lists = Vec::new();
    let mut joining = Vec::new();
    for path in query_files(&m.dir) {
        let name = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                diags.push(Diag::new(
                    "strata::config::read",
                    "Cannot read a query file",
                    format!("{name}: {e}"),
                ));
                continue;
            }
        };
        let id = sources.add(name, text);
        let body = match crate::syntax::parse_body(id, sources.text(id)) {
            Ok(b) => b,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        for a in &body.attrs {
            diags.push(unsupported_attr(a, "a query file", &[]));
        }
        for b in body.blocks {
            match b.kind.as_str() {
                "list" => lists.extend(list(&b, &mut diags)),
                "provider" | "variable" | "locals" => joining.push(b),
                other => diags.push(err(
                    "strata::config::query",
                    "Invalid block type",
                    format!("This block type is not valid within a query file: {other}"),
                    b.kind_span,
                )),
            }
        }
    }
    unique(&lists, &mut diags);
    let lists = refs::order(lists, &mut diags);
    let span = Span::default();
    module_body(
        Body {
            attrs: Vec::new(),
            blocks: joining,
            span,
            json: false,
        },
        m,
        &mut diags,
    );
    diags.into_result(lists)
}

/// Two list blocks of one type and name, in Terraform's words.
fn unique(lists: &[ListBlock], diags: &mut Diags) {
    let mut seen: HashMap<(&str, &str), Span> = HashMap::new();
    for l in lists {
        if let Some(first) = seen.insert((&l.type_name, &l.name), l.span) {
            diags.push(err(
                "strata::config::query",
                "Duplicate \"list\" block names",
                format!(
                    "This query file already has a list block named {}.{} defined at {first:?}.",
                    l.type_name, l.name
                ),
                l.span,
            ));
        }
    }
}

fn list(b: &Block, diags: &mut Diags) -> Option<ListBlock> {
    let l = labels(b, &["type", "name"], diags)?;
    let attr = |name: &str| b.body.attr(name).map(|a| a.expr.clone());
    let words = Configured {
        code: "strata::config::query",
        kind: "list",
        noun: "A list block",
        inside: "a list block",
        both: "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive.",
    };
    let config = config_body(b, &ALLOWED, &words, diags);
    let Some(provider) = b
        .body
        .attr("provider")
        .and_then(|a| keyless_provider_ref(&a.expr, "a list block", diags))
    else {
        diags.push(err(
            "strata::config::query",
            "Missing \"provider\" attribute",
            "You must specify a provider attribute when defining a list block.",
            b.kind_span,
        ));
        return None;
    };
    Some(ListBlock {
        type_name: l[0].clone(),
        name: l[1].clone(),
        provider,
        count: attr("count"),
        for_each: attr("for_each"),
        include_resource: attr("include_resource"),
        limit: attr("limit"),
        config,
        span: b.span,
    })
}
