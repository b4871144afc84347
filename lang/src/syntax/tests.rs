//! The parser on its own: each construct of the native syntax parses to
//! the tree it means, and each kind of mistake is refused with its own
//! error (the wording users see; `tests/syntax_oracle.rs` holds the
//! verdicts to Terraform's over a larger corpus).

use super::{parse_body, parse_expr};
use crate::diag::FileId;

/// The summary of the error `src` is refused with, or `ok`.
fn verdict(src: &str) -> String {
    match parse_body(FileId(0), src) {
        Ok(_) => "ok".into(),
        Err(d) => d.summary,
    }
}

fn table(rows: &[(&str, &str)]) {
    let wrong: Vec<String> = rows
        .iter()
        .filter_map(|(src, want)| {
            let got = verdict(src);
            (got != *want).then(|| format!("{src:?}: {got} (want {want})"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn each_construct_parses() {
    table(&[
        ("a = 1\n", "ok"),
        ("a = 1", "ok"),
        ("block {\n}\n", "ok"),
        ("block \"x\" \"y\" {\n  a = 1\n}\n", "ok"),
        ("block { a = 1 }\n", "ok"),
        ("a = \"x ${b} %{if c}y%{endif}\"\n", "ok"),
        ("a = <<EOT\nline ${b}\nEOT\n", "ok"),
        ("a = <<-EOT\n  indented\n  EOT\n", "ok"),
        ("a = [for x in xs : x if x != \"\"]\n", "ok"),
        ("a = {for k, v in m : k => v...}\n", "ok"),
        ("a = xs[*].id\n", "ok"),
        ("a = xs.*.id\n", "ok"),
        ("a = c ? 1 : 2\n", "ok"),
        ("a = f(1, [2]...)\n", "ok"),
        ("a = provider::aws::arn_parse(x)\n", "ok"),
        ("a = x[0].y[\"k\"]\n", "ok"),
        ("a = -1 + 2 * 3 % 4 / 5 - !b\n", "ok"),
        ("a = (1 + 2) == 3 && b || c != d\n", "ok"),
        ("# comment\n// comment\n/* block\ncomment */\na = 1\n", "ok"),
        ("a = {\n  b = 1,\n  \"c\" = 2\n  (d) = 3\n}\n", "ok"),
    ]);
}

/// Where Terraform 1.11's first error is worded otherwise, its wording
/// follows the row (strata says one error where Terraform says two).
#[test]
fn each_mistake_has_its_error() {
    table(&[
        ("a = \n", "Invalid expression"),
        ("a 1\n", "Invalid block definition"),
        ("block {\n", "Unclosed configuration block"),
        // Terraform: "Invalid multi-line string", then this.
        ("a = \"x\n", "Unterminated template string"),
        // Terraform: "Unclosed template interpolation sequence".
        ("a = \"${b\"\n", "Extra characters after interpolation"),
        // Terraform: "Unterminated template string".
        ("a = <<EOT\nnever closed\n", "Unterminated heredoc"),
        // Terraform: "Missing newline after argument".
        ("a = 1 b = 2\n", "Missing newline after argument definition"),
        ("a = [1, 2\n", "Missing item separator"),
        ("1a = 1\n", "Argument or block definition required"),
        ("a = 1\na = 2\n", "Attribute redefined"),
    ]);
}

#[test]
fn nesting_past_the_cap_is_an_error_not_a_crash() {
    let deep = "[".repeat(super::MAX_NESTING + 1);
    let e = parse_expr(FileId(0), &deep).err().map(|d| d.summary);
    assert!(e.is_some(), "{} brackets parsed", super::MAX_NESTING + 1);
    let fine = format!("{}1{}", "[".repeat(50), "]".repeat(50));
    assert!(parse_expr(FileId(0), &fine).is_ok());
}
