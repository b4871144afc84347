//! `strata metadata functions -json`: the signature of every function the
//! language has, as Terraform's command prints them for editors and
//! language servers — each under its name and under `core::NAME`, its
//! parameters' names, types and whether they take null, its variadic
//! parameter and its return type. strata does not carry the functions'
//! descriptions (the format leaves them out when there are none).

use crate::lang::types::Type;
use strata_provider::{FunctionParam, FunctionSig};

/// The result type Terraform declares for a function whose result type
/// it works out from the arguments: strata's table gives the type of an
/// unknown result, which is narrower.
fn declared_return(name: &str) -> Option<Type> {
    match name {
        "contains" | "format" | "formatlist" | "index" | "parseint" | "sum" | "templatefile" => {
            Some(Type::Dynamic)
        }
        "regexall" => Some(Type::list(Type::Dynamic)),
        _ => None,
    }
}

/// Terraform's functions that are language forms in strata (their
/// argument is an expression, not a value), with the signature
/// Terraform gives them.
fn forms() -> Vec<(&'static str, FunctionSig)> {
    let param = |name: &str| FunctionParam {
        name: name.into(),
        ty: Type::Dynamic,
        allow_null: false,
        allow_unknown: false,
    };
    vec![
        (
            "can",
            FunctionSig {
                params: vec![param("expression")],
                variadic: None,
                returns: Type::Bool,
            },
        ),
        (
            "try",
            FunctionSig {
                params: Vec::new(),
                variadic: Some(param("expressions")),
                returns: Type::Dynamic,
            },
        ),
    ]
}

/// The document, as Terraform prints it (one line).
pub fn function_signatures() -> String {
    // By name, as Terraform's map is written.
    let mut signatures = std::collections::BTreeMap::new();
    // `type` is the console's alone, and provider functions are not the
    // language's: Terraform lists neither.
    let core = crate::funcs::names()
        .into_iter()
        .filter(|n| *n != "type" && !n.contains("::"));
    for name in core {
        let Some(def) = crate::funcs::lookup(name) else {
            continue;
        };
        let param = |p: &crate::funcs::Param| FunctionParam {
            name: p.name.to_string(),
            ty: p.ty.clone(),
            allow_null: p.allow_null,
            allow_unknown: p.allow_unknown,
        };
        let sig = FunctionSig {
            params: def.params.iter().map(param).collect(),
            variadic: def.variadic.as_ref().map(param),
            returns: declared_return(name).unwrap_or_else(|| def.ret.clone()),
        };
        signatures.insert(name.to_string(), sig);
    }
    signatures.extend(forms().into_iter().map(|(n, s)| (n.to_string(), s)));
    let signatures: std::collections::BTreeMap<String, serde_json::Value> = signatures
        .iter()
        .flat_map(|(name, sig)| {
            let json = super::providers::function_json(sig);
            [
                (format!("core::{name}"), json.clone()),
                (name.clone(), json),
            ]
        })
        .collect();
    let doc = serde_json::json!({
        "format_version": "1.0",
        "function_signatures": signatures,
    });
    format!("{doc}\n")
}
