//! The evaluator on its own: each operator and construct against the
//! value Terraform 1.11's console gives for it (recorded beside each
//! row), and how unknown and sensitive values pass through them.

use super::{Evaluator, MapScope};
use crate::diag::FileId;
use crate::lang::display::show;
use crate::lang::types::Type;
use crate::lang::value::{Attrs, Value};

/// `n = 2`, `s = "a"`, `xs = ["a", "b"]`, `u` a number not known yet,
/// `secret` a sensitive string.
fn names() -> Attrs {
    let mut vars = Attrs::new();
    vars.insert("n".into(), Value::int(2));
    vars.insert("s".into(), Value::string("a"));
    let xs = vec![Value::string("a"), Value::string("b")];
    vars.insert("xs".into(), Value::Tuple(xs));
    vars.insert("u".into(), Value::Unknown(Type::Number));
    let secret = Value::Sensitive(Box::new(Value::string("x")));
    vars.insert("secret".into(), secret);
    vars
}

/// The expression's value as the console shows it, or its error's summary.
fn eval(src: &str) -> Result<String, String> {
    let expr = crate::syntax::parse_expr(FileId(0), src).map_err(|d| d.summary.clone())?;
    let vars = names();
    let scope = MapScope(&vars);
    let mut ev = Evaluator::new(&scope, std::path::PathBuf::new());
    ev.eval(&expr).map(|v| show(&v)).map_err(|d| d.summary)
}

fn table(rows: &[(&str, &str)]) {
    let wrong: Vec<String> = rows
        .iter()
        .filter_map(|(src, want)| {
            let got = eval(src).unwrap_or_else(|e| format!("error: {e}"));
            (got != *want).then(|| format!("{src}: {got} (want {want})"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn operators_are_terraforms() {
    table(&[
        ("1 + 2", "3"),
        ("7 / 2", "3.5"),
        ("7 % 3", "1"),
        ("1 / 0", "+Inf"),
        ("2 * 3 + 4", "10"),
        ("10 - 2 - 3", "5"),
        ("-n", "-2"),
        ("\"a\" == \"a\"", "true"),
        ("1 == \"1\"", "false"),
        ("null == null", "true"),
        ("!true", "false"),
        ("true && false", "false"),
        ("1 < 2 && 2 <= 2", "true"),
        ("n > 1 ? \"big\" : \"small\"", "\"big\""),
        // The arms unify: a number becomes a string.
        ("true ? 1 : \"a\"", "\"1\""),
        ("\"${s}-${n}\"", "\"a-2\""),
        // A template that is one interpolation is its value, unconverted.
        ("\"${n}\" == \"2\"", "false"),
    ]);
}

#[test]
fn constructs_are_terraforms() {
    table(&[
        ("[for x in xs : x][1]", "\"b\""),
        ("[for x in xs : \"${x}!\" if x != \"a\"][0]", "\"b!\""),
        ("{for x in xs : x => \"${x}${x}\"}[\"b\"]", "\"bb\""),
        ("{a = 1}.a", "1"),
        ("xs[0]", "\"a\""),
        ("([{v = 1}, {v = 2}][*].v)[1]", "2"),
    ]);
}

#[test]
fn errors_are_terraforms() {
    table(&[
        ("\"a\" + 1", "error: Invalid operand"),
        ("[1, 2][5]", "error: Invalid index"),
        // The index is the splat's, taken of each number.
        ("[{v = 1}, {v = 2}][*].v[1]", "error: Invalid index"),
    ]);
}

#[test]
fn unknowns_stay_unknown_until_they_need_not() {
    let later = "(known after apply)";
    table(&[
        ("u + 1", later),
        ("-u", later),
        ("u > 1 ? \"a\" : \"b\"", later),
        ("\"${u}-x\"", later),
        ("[for x in xs : u][0]", later),
        // A known condition picks its arm; the other may stay unknown.
        ("n > 1 ? \"x\" : u", "\"x\""),
        ("[1, u][0]", "1"),
        ("{a = u, b = 2}.b", "2"),
        // A known list's one element, whatever it holds.
        ("one([{a = u, b = 2}]).b", "2"),
        ("one([u])", later),
    ]);
}

#[test]
fn sensitive_values_mark_what_is_made_of_them() {
    let hidden = "(sensitive value)";
    table(&[
        ("secret", hidden),
        ("\"${secret}-x\"", hidden),
        ("secret == \"x\"", hidden),
        ("[secret, \"y\"][1]", "\"y\""),
        // As Terraform 1.11: comparing looks into the object; merging
        // leaves its other attributes as they were.
        ("{k = secret} == null", hidden),
        ("merge({k = secret}, {j = 1}).j", "1"),
        ("merge({k = secret}, {j = 1}).k", hidden),
        // As Terraform 1.11: a collection's functions look at its shape,
        // not into its elements, so only a marked collection marks what
        // they give (strata marked all of these).
        ("length({a = secret, b = \"y\"})", "2"),
        ("keys({a = secret, b = \"y\"})[1]", "\"b\""),
        ("values({a = secret, b = \"y\"})[1]", "\"y\""),
        ("values({a = secret, b = \"y\"})[0]", hidden),
        ("lookup({a = secret, b = \"y\"}, \"b\")", "\"y\""),
        ("element([\"a\", secret], 0)", "\"a\""),
        ("flatten([[\"a\"], [secret]])[0]", "\"a\""),
        ("length(sensitive([1, 2]))", hidden),
        // A marked list taken apart marks all of it.
        ("flatten([sensitive([\"a\"]), [\"b\"]])", hidden),
    ]);
}
