//! `strata console`: evaluate expressions, interactively, from a pipe as
//! Terraform's console reads one, or one JSON line per expression for
//! tools (`--json`).

use crate::diag::{Diag, Sources};
use crate::eval::{Evaluator, Scope};
use crate::lang::value::Value;
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Evaluates one expression line in a scope.
pub fn eval_line(
    line: &str,
    scope: &dyn Scope,
    base_dir: PathBuf,
    sources: &mut Sources,
) -> Result<Value, Diag> {
    let file = sources.add("<console-input>", line.to_string());
    let expr = crate::syntax::parse_expr(file, line)?;
    let mut ev = Evaluator::new(scope, base_dir);
    ev.eval(&expr)
}

/// `type(x)` typed at the prompt: Terraform's console prints x's type. It is
/// the only place the type function works, so it is recognised here.
fn top_level_type(
    line: &str,
    scope: &dyn Scope,
    base_dir: PathBuf,
    sources: &mut Sources,
) -> Option<Result<String, Diag>> {
    let file = sources.add("<console-input>", line.to_string());
    let expr = crate::syntax::parse_expr(file, line).ok()?;
    match &expr.kind {
        crate::syntax::ExprKind::Call {
            name,
            args,
            expand_final: false,
        } if name == "type" && args.len() == 1 => Some(
            Evaluator::new(scope, base_dir)
                .eval(&args[0])
                .map(|v| v.ty().to_string()),
        ),
        _ => None,
    }
}

/// The `--json` answer for one line: `{"value": V, "type": "T"}` or `{"error": "..."}`.
pub fn json_answer(result: Result<Value, Diag>) -> String {
    let mut out = String::new();
    match result {
        Ok(v) => {
            // Terraform's console prints these placeholders instead of a
            // value; the flag says which one it is.
            let placeholder = if v.contains_sensitive() {
                Some(("(sensitive value)", "sensitive"))
            } else if !v.is_wholly_known() {
                Some(("(known after apply)", "unknown"))
            } else {
                None
            };
            if let Some((text, flag)) = placeholder {
                out.push_str(&format!("{{\"value\":\"{text}\",\"{flag}\":true,\"type\":"));
                crate::lang::value::json_string(&v.ty().to_string(), &mut out);
                out.push('}');
                return out;
            }
            // JSON has no infinity: the console says it as its text.
            match v.to_json_with(crate::lang::value::Infinity::AsText) {
                Ok(j) => {
                    out.push_str("{\"value\":");
                    out.push_str(&j);
                    out.push_str(",\"type\":");
                    crate::lang::value::json_string(&v.ty().to_string(), &mut out);
                    out.push('}');
                }
                Err(e) => {
                    out.push_str("{\"error\":");
                    crate::lang::value::json_string(
                        &format!(
                            "Error in function call: Call to function \"jsonencode\" failed: {e}."
                        ),
                        &mut out,
                    );
                    out.push('}');
                }
            }
        }
        Err(d) => {
            out.push_str("{\"error\":");
            crate::lang::value::json_string(&d.one_line(), &mut out);
            out.push('}');
        }
    }
    out
}

/// `--json`: one answer a line for each line of `input`; a failing line
/// never stops the stream.
pub fn run_json(
    input: impl BufRead,
    mut output: impl Write,
    scope: &dyn Scope,
    base_dir: PathBuf,
) -> std::io::Result<()> {
    let mut sources = Sources::default();
    for line in input.lines() {
        let line = line?;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let result = eval_line(trimmed, scope, base_dir.clone(), &mut sources);
        writeln!(output, "{}", json_answer(result))?;
    }
    Ok(())
}

/// Input from a pipe, as Terraform's console reads it: each line
/// evaluated in turn and only the last answer written; the first error
/// stops it (returned, for the command to report and exit 1); `exit`
/// ends it without an answer.
pub fn piped(
    input: impl BufRead,
    mut output: impl Write,
    scope: &dyn Scope,
    base_dir: PathBuf,
    sources: &mut Sources,
) -> std::io::Result<Result<(), Diag>> {
    let mut last = String::new();
    for line in input.lines() {
        let line = line?;
        let trimmed = line.trim();
        if matches!(trimmed, "exit" | "quit") {
            return Ok(Ok(()));
        }
        if trimmed.is_empty() {
            continue;
        }
        match answer(trimmed, scope, base_dir.clone(), sources) {
            Ok(a) => last = a,
            Err(d) => return Ok(Err(d)),
        }
    }
    writeln!(output, "{last}")?;
    Ok(Ok(()))
}

/// What the console shows for one (possibly multi-line) input: the
/// value, or its type for `type(x)`.
fn answer(
    text: &str,
    scope: &dyn Scope,
    base_dir: PathBuf,
    sources: &mut Sources,
) -> Result<String, Diag> {
    if let Some(r) = top_level_type(text, scope, base_dir.clone(), sources) {
        return r;
    }
    eval_line(text, scope, base_dir, sources).map(|v| crate::lang::display::show(&v))
}

/// The interactive console's answer to one input, an error included.
fn respond(
    text: &str,
    output: &mut impl Write,
    scope: &dyn Scope,
    base_dir: PathBuf,
    sources: &mut Sources,
) -> std::io::Result<()> {
    match answer(text, scope, base_dir, sources) {
        Ok(a) => writeln!(output, "{a}")?,
        Err(d) => writeln!(output, "{:?}", miette::Report::new(d.report(sources)))?,
    }
    output.flush()
}

/// Brackets opened and not yet closed in `text`, outside quoted strings.
fn open_brackets(text: &str) -> i64 {
    let mut depth = 0i64;
    let mut in_str = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// The interactive console: a `> ` prompt, `... ` while brackets are open
/// so an expression may span lines, `exit` to leave.
pub fn interactive(
    mut input: impl BufRead,
    mut output: impl Write,
    scope: &dyn Scope,
    base_dir: PathBuf,
) -> std::io::Result<()> {
    let mut sources = Sources::default();
    let mut pending = String::new();
    loop {
        write!(output, "{}", if pending.is_empty() { "> " } else { "... " })?;
        output.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if pending.is_empty() && matches!(line.trim(), "exit" | "quit") {
            return Ok(());
        }
        pending.push_str(&line);
        if open_brackets(&pending) > 0 {
            continue;
        }
        let text = std::mem::take(&mut pending);
        if !text.trim().is_empty() {
            respond(
                text.trim(),
                &mut output,
                scope,
                base_dir.clone(),
                &mut sources,
            )?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::number::Number;

    /// JSON has no infinity; the console's answer says it as Terraform's
    /// console shows it, where it said jsonencode failed.
    #[test]
    fn an_infinity_is_answered_as_its_text() {
        let inf = Number::infinity(false);
        let neg = Number::infinity(true);
        let v = Value::Tuple(vec![Value::Number(inf), Value::Number(neg)].into());
        assert_eq!(
            json_answer(Ok(v)),
            r#"{"value":["+Inf","-Inf"],"type":"tuple([number, number])"}"#
        );
    }
}
