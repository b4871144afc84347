//! Variable precedence, unknown-value propagation and the sensitive mark,
//! through the library API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use strata::config::variables::{resolve, CliInput};
use strata::config::{self, ConfigScope, Run};
use strata::diag::Sources;
use strata::eval::{Evaluator, MapScope};
use strata::lang::types::Type;
use strata::lang::value::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn vars_of(cli: &[CliInput], env: &[(&str, &str)]) -> BTreeMap<String, Value> {
    let mut sources = Sources::default();
    let module = config::load(&fixture("precedence"), &mut sources).expect("fixture loads");
    let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    resolve(&module, cli, env, &mut sources).expect("variables resolve")
}

fn s(v: &BTreeMap<String, Value>, k: &str) -> String {
    v[k].as_str().expect("string").to_string()
}

#[test]
fn precedence_follows_terraform() {
    let tmp = std::env::temp_dir().join(format!("strata-varfile-{}.tfvars", std::process::id()));
    std::fs::write(&tmp, "e = \"file\"\n").expect("write var file");
    let v = vars_of(
        &[
            CliInput::Var("e=cli-first".into()),
            CliInput::File(tmp.clone()),
        ],
        &[
            ("STRATA_VAR_a", "env"),
            ("STRATA_VAR_b", "env"),
            ("STRATA_VAR_undeclared", "ignored"),
        ],
    );
    // a: env beats the default.
    assert_eq!(s(&v, "a"), "env");
    // b: terraform.tfvars beats env.
    assert_eq!(s(&v, "b"), "tfvars");
    // c: *.auto.tfvars beats terraform.tfvars.
    assert_eq!(s(&v, "c"), "auto-a");
    // d: auto files apply in name order, so b.auto.tfvars.json wins over a.auto.tfvars.
    assert_eq!(s(&v, "d"), "auto-b-json");
    // e: command-line options apply in the order given: the later --var-file wins.
    assert_eq!(s(&v, "e"), "file");
    let v2 = vars_of(
        &[
            CliInput::File(tmp.clone()),
            CliInput::Var("e=cli-last".into()),
        ],
        &[],
    );
    assert_eq!(s(&v2, "e"), "cli-last");
    let _ = std::fs::remove_file(tmp);
    // Terraform's TF_VAR_ is read as Terraform reads it; strata's own
    // prefix wins where both name a variable, whatever the order given.
    let v3 = vars_of(&[], &[("TF_VAR_a", "terraform")]);
    assert_eq!(s(&v3, "a"), "terraform");
    let v4 = vars_of(
        &[],
        &[
            ("TF_VAR_a", "terraform"),
            ("STRATA_VAR_a", "strata"),
            ("TF_VAR_a", "terraform"),
        ],
    );
    assert_eq!(s(&v4, "a"), "strata");
}

#[test]
fn non_string_values_parse_as_hcl() {
    let v = vars_of(
        &[
            CliInput::Var("n=42".into()),
            CliInput::Var("l=[\"x\", 1]".into()),
        ],
        &[],
    );
    assert_eq!(v["n"].as_number().expect("number").to_text(), "42");
    assert_eq!(v["l"].to_json().expect("json"), r#"["x","1"]"#);
    assert_eq!(v["l"].ty(), Type::list(Type::String));
    // A string variable takes the raw text, even when it looks like HCL.
    let v = vars_of(&[CliInput::Var("a=[1]".into())], &[]);
    assert_eq!(s(&v, "a"), "[1]");
}

#[test]
fn wrong_typed_value_is_reported() {
    let mut sources = Sources::default();
    let module = config::load(&fixture("precedence"), &mut sources).expect("fixture loads");
    let err = resolve(
        &module,
        &[CliInput::Var("n=\"many\"".into())],
        Vec::new(),
        &mut sources,
    )
    .expect_err("a string is not a number");
    assert!(
        err.0[0].detail.contains("a number is required"),
        "{:?}",
        err
    );
}

#[test]
fn optional_attributes_get_defaults() {
    let mut sources = Sources::default();
    let module = config::load(&fixture("valid"), &mut sources).expect("fixture loads");
    let v = resolve(&module, &[], Vec::new(), &mut sources).expect("resolve");
    let pool = &v["pools"].entries().expect("map")["h100"];
    let pool = pool.entries().expect("object");
    assert_eq!(pool["count"].as_number().expect("n").to_text(), "2");
    assert_eq!(pool["spot"].as_bool(), Some(false));
    assert_eq!(pool["labels"].len(), Some(0));
    // The sensitive variable carries the mark into every expression using it.
    assert!(v["token"].is_sensitive());
    let scope = ConfigScope::new(&module, v, Run::new(module.dir.clone(), "default"));
    let out = eval_in(&scope, "\"Bearer ${var.token}\"");
    assert!(out.is_sensitive(), "templates keep the mark");
    let out = eval_in(&scope, "local.names");
    assert!(!out.contains_sensitive(), "unrelated values stay unmarked");
}

fn eval_in(scope: &dyn strata::eval::Scope, src: &str) -> Value {
    let mut sources = Sources::default();
    let id = sources.add("<test>", src.to_string());
    let expr = strata::syntax::parse_expr(id, src).expect("parses");
    Evaluator::new(scope, PathBuf::from("."))
        .eval(&expr)
        .expect("evaluates")
}

fn eval_with(vars: &[(&str, Value)], src: &str) -> Value {
    let map: strata::lang::value::Attrs = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    eval_in(&MapScope(&map), src)
}

#[test]
fn unknown_values_propagate() {
    let u = || ("u", Value::Unknown(Type::String));
    let cases = [
        ("upper(u)", Some(Type::String)),
        ("\"x-${u}\"", Some(Type::String)),
        ("length(u)", Some(Type::Number)),
        ("u == \"a\"", Some(Type::Bool)),
        ("[u, \"b\"][1]", None),
        ("cidrsubnet(u, 4, 1)", Some(Type::String)),
        ("true ? u : \"b\"", Some(Type::String)),
        ("jsonencode({a = u})", Some(Type::String)),
    ];
    for (src, ty) in cases {
        let v = eval_with(&[u()], src);
        match ty {
            Some(t) => {
                assert!(!v.is_known(), "{src} should be unknown, got {v:?}");
                assert_eq!(v.ty(), t, "{src}");
            }
            None => assert_eq!(v.as_str(), Some("b"), "{src}: known parts stay known"),
        }
    }
    // A known deciding side settles && and ||, on either side (Terraform
    // 1.12's rule, hashicorp/hcl#713); a side that does not decide leaves
    // the result unknown.
    let b = || ("b", Value::Unknown(Type::Bool));
    for (src, want) in [
        ("false && b", Some(false)),
        ("b && false", Some(false)),
        ("true || b", Some(true)),
        ("b || true", Some(true)),
        ("true && b", None),
        ("b || false", None),
    ] {
        let v = eval_with(&[b()], src);
        assert_eq!(v.as_bool(), want, "{src}");
        assert_eq!(v.is_known(), want.is_some(), "{src}");
    }
    // An unknown compared with a known value of another type is decided,
    // as cty decides it (a module's "was this given?" test of an unknown
    // string against an object default is true while planning).
    for (src, want) in [
        ("u != {a = []}", Some(true)),
        ("u == {a = []}", Some(false)),
        ("u == 1", Some(false)),
        ("u == \"a\"", None),
        ("u == null", None),
    ] {
        let v = eval_with(&[u()], src);
        assert_eq!(v.as_bool(), want, "{src}");
        assert_eq!(v.is_known(), want.is_some(), "{src}");
    }
    // An unknown condition choosing between two nulls gives null, known
    // (Terraform plans `uuid() == "" ? null : null` as null); between two
    // equal values it is still unknown.
    let v = eval_with(&[b()], "b ? null : null");
    assert!(v.is_known() && v.is_null(), "{v:?}");
    assert!(!eval_with(&[b()], "b ? \"a\" : \"a\"").is_known());
    // An unknown condition makes a for-expression's result unknown.
    let v = eval_with(
        &[("b", Value::Unknown(Type::Bool))],
        "[for x in [1, 2] : x if b]",
    );
    assert!(!v.is_known());
}

#[test]
fn sensitive_mark_follows_values() {
    let secret = ("s", Value::string("hunter2").mark());
    for src in [
        "upper(s)",
        "\"pw=${s}\"",
        "[s][0]",
        "{k = s}.k",
        "s == \"x\"",
        "length(s)",
        "true ? s : \"x\"",
        "base64encode(s)",
    ] {
        let v = eval_with(std::slice::from_ref(&secret), src);
        assert!(
            v.is_sensitive() || v.contains_sensitive(),
            "{src} lost the mark: {v:?}"
        );
    }
    let v = eval_with(std::slice::from_ref(&secret), "nonsensitive(s)");
    assert!(!v.contains_sensitive());
    let v = eval_with(&[secret], "[for c in [\"a\"] : c]");
    assert!(
        !v.contains_sensitive(),
        "values not derived from the secret are not marked"
    );
}

#[test]
fn module_outputs_evaluate_from_inputs() {
    let mut sources = Sources::default();
    let module = config::load(&fixture("valid"), &mut sources).expect("fixture loads");
    let v = resolve(&module, &[], Vec::new(), &mut sources).expect("resolve");
    let scope = ConfigScope::new(&module, v, Run::new(module.dir.clone(), "default"));
    // The child's `size` defaults to 3; `name` comes from the call.
    assert_eq!(
        eval_in(&scope, "module.child.greeting").as_str(),
        Some("hello train x3")
    );
}

#[test]
fn interactive_console_reads_multi_line_expressions() {
    let input: &[u8] = b"[\n  1,\n  2\n][1]\ntype({a = 1})\nexit\n1\n";
    let mut out = Vec::new();
    let empty = config::Module::default();
    let scope = ConfigScope::new(
        &empty,
        BTreeMap::new(),
        Run::new(PathBuf::from("."), "default"),
    );
    strata::console::interactive(input, &mut out, &scope, PathBuf::from("."))
        .expect("console runs");
    let text = String::from_utf8(out).expect("utf-8");
    assert!(
        text.starts_with("> ... ... ... 2\n"),
        "continuation prompts then the value: {text:?}"
    );
    assert!(
        text.contains("> object({a: number})\n"),
        "type() at the prompt: {text:?}"
    );
    assert!(
        !text.contains("\n1\n"),
        "nothing is evaluated after exit: {text:?}"
    );
}

/// The value of `src` as JSON text, or the error's summary.
fn parse_eval(src: &str) -> Result<String, String> {
    let mut sources = Sources::default();
    let id = sources.add("<test>", src.to_string());
    let expr = strata::syntax::parse_expr(id, src).map_err(|d| d.summary)?;
    Evaluator::new(&strata::eval::EmptyScope, PathBuf::from("."))
        .eval(&expr)
        .map(|v| strata::lang::json::plain_json(&v).to_string())
        .map_err(|d| d.summary)
}

/// A chain of binary operators is one flat node, however long: Terraform
/// takes 100 000 `+` in a row, and so does strata (hcl-edit, the parser
/// strata used before its own, stopped at 128).
#[test]
fn long_operator_chains_keep_their_precedence() {
    let n = 100_000;
    let sum = vec!["1"; n].join(" + ");
    assert_eq!(parse_eval(&sum), Ok((n as i64).to_string()));
    // `1 + 2 * 3 - 8 / 4 + …`: each `+ 2 * 3 - 8 / 4` adds 4.
    let mixed = format!("1{}", " + 2 * 3 - 8 / 4".repeat(n / 4));
    assert_eq!(parse_eval(&mixed), Ok((1 + 4 * (n / 4) as i64).to_string()));
    // Left to right within a level: ((100 - 1) - 1) …, never 100 - (1 - …).
    let down = format!("100{}", " - 1".repeat(99));
    assert_eq!(parse_eval(&down), Ok((1).to_string()));
    let or = format!("false{}", " || false".repeat(n - 2)) + " || true";
    assert_eq!(parse_eval(&or), Ok("true".to_string()));
    // Comparison binds looser than arithmetic, `&&` looser than `==`.
    assert_eq!(
        parse_eval("1 + 1 == 2 && 3 * 2 > 5 || false"),
        Ok("true".to_string())
    );
}

/// Everything that nests counts against one limit, far above what any
/// configuration writes, and is evaluated on an ordinary thread's stack
/// (this test's): past the limit is an error, never an overflow.
#[test]
fn nesting_up_to_the_limit_evaluates_and_past_it_is_an_error() {
    let max = strata::syntax::MAX_NESTING;
    let wrap = |open: &str, inner: &str, close: &str, n: usize| {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    };
    let under = max - 10;
    let shapes = [
        ("(", "1", ")", "1"),
        ("max(", "1", ")", "1"),
        ("\"${", "\"a\"", "}\"", "\"a\""),
        ("true ? ", "1", " : 2", "1"),
        (
            "-",
            "1",
            "",
            if under.is_multiple_of(2) { "1" } else { "-1" },
        ),
    ];
    for (open, inner, close, want) in shapes {
        let deep = wrap(open, inner, close, under);
        assert_eq!(
            parse_eval(&deep),
            Ok(want.to_string()),
            "{open}…{close} × {under}"
        );
        let too_deep = wrap(open, inner, close, max + 1);
        assert_eq!(
            parse_eval(&too_deep),
            Err("Expression nested too deeply".to_string()),
            "{open}…{close} × {}",
            max + 1
        );
    }
    // Hostile input, a million deep, ends in the same error.
    let million = 1_000_000;
    for src in [
        format!("{}true", "!".repeat(million)),
        format!("{{a = 1}}{}", ".a".repeat(million)),
        format!("{}1{}", "[".repeat(million), "]".repeat(million)),
    ] {
        assert_eq!(
            parse_eval(&src),
            Err("Expression nested too deeply".to_string())
        );
    }
}
