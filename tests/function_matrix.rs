//! Every function with awkward arguments — null, unknown, sensitive, empty
//! collections, odd numbers — in every position up to two arguments: no
//! panic, and a sensitive argument always gives a sensitive (or failed)
//! result, except where dropping the mark is the function's job.

use std::path::PathBuf;
use strata::diag::Sources;
use strata::eval::{Evaluator, MapScope};
use strata::lang::types::Type;
use strata::lang::value::{Attrs, Value};

const MARK_DROPPERS: &[&str] = &["nonsensitive", "issensitive", "type"];

#[test]
fn awkward_arguments_never_panic_and_keep_the_mark() {
    let vars = Attrs::from([
        ("u".to_string(), Value::unknown()),
        ("us".to_string(), Value::Unknown(Type::String)),
        ("ul".to_string(), Value::Unknown(Type::list(Type::String))),
        ("s".to_string(), Value::string("secret").mark()),
        (
            "sl".to_string(),
            Value::List(Type::String, vec![Value::string("a")]).mark(),
        ),
    ]);
    let args = [
        "null",
        "u",
        "us",
        "ul",
        "s",
        "sl",
        "\"\"",
        "\"a,b\"",
        "0",
        "-1",
        "1.5",
        "1e20",
        "[]",
        "{}",
        "[\"a\", 1]",
        "{a = 1}",
        "toset([\"a\"])",
        "tolist([])",
        "true",
        "\"10.0.0.0/8\"",
        "\"2024-01-02T03:04:05Z\"",
    ];
    let scope = MapScope(&vars);
    let mut sources = Sources::default();
    let mut calls = 0;
    for name in strata::funcs::names() {
        if matches!(
            name,
            "try"
                | "can"
                | "file"
                | "filebase64"
                | "fileexists"
                | "fileset"
                | "templatefile"
                | "filemd5"
                | "filesha1"
                | "filesha256"
                | "filesha512"
                | "filebase64sha256"
                | "filebase64sha512"
                | "abspath"
                | "pathexpand"
                | "timestamp"
                | "uuid"
                | "bcrypt"
        ) {
            continue; // touch the filesystem, the clock or randomness
        }
        let mut lists: Vec<Vec<&str>> = vec![vec![]];
        lists.extend(args.iter().map(|a| vec![*a]));
        for a in args {
            for b in args {
                lists.push(vec![a, b]);
            }
        }
        for list in lists {
            let src = format!("{name}({})", list.join(", "));
            let id = sources.add("<matrix>", src.clone());
            let expr = strata::syntax::parse_expr(id, &src).expect("parses");
            calls += 1;
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                Evaluator::new(&scope, PathBuf::from("/nonexistent")).eval(&expr)
            }));
            let result = result.unwrap_or_else(|_| panic!("{src} panicked"));
            let sensitive_arg = list.iter().any(|a| *a == "s" || *a == "sl");
            if let Ok(v) = result {
                if sensitive_arg && !MARK_DROPPERS.contains(&name) {
                    assert!(
                        v.contains_sensitive(),
                        "{src} dropped the sensitive mark: {v:?}"
                    );
                }
            }
        }
    }
    assert!(calls > 40_000, "covered {calls} calls");
}
