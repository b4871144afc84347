//! The provider's functions: `provider::stratatest::slug(text)` (a name
//! made of lowercase letters, digits and hyphens; an error naming its
//! argument when nothing is left) and `provider::stratatest::tag(prefix,
//! parts...)` (variadic: joined with ":").

use strata_plugin::proto::tfplugin6::{function, Function, FunctionError};
use strata_value::json::type_to_json;
use strata_value::types::Type;
use strata_value::value::Value;

fn param(name: &str) -> function::Parameter {
    function::Parameter {
        name: name.into(),
        r#type: type_to_json(&Type::String).to_string().into_bytes(),
        ..Default::default()
    }
}

fn returns_string() -> Option<function::Return> {
    Some(function::Return {
        r#type: type_to_json(&Type::String).to_string().into_bytes(),
    })
}

pub fn declared() -> std::collections::HashMap<String, Function> {
    let slug = Function {
        parameters: vec![param("text")],
        r#return: returns_string(),
        summary: "A name made of lowercase letters, digits and hyphens.".into(),
        ..Default::default()
    };
    let tag = Function {
        parameters: vec![param("prefix")],
        variadic_parameter: Some(param("parts")),
        r#return: returns_string(),
        summary: "The prefix and parts joined with colons.".into(),
        ..Default::default()
    };
    [("slug".to_string(), slug), ("tag".to_string(), tag)].into()
}

fn refused(text: String, argument: Option<i64>) -> FunctionError {
    FunctionError {
        text,
        function_argument: argument,
    }
}

/// Calls `name` with `args`, each a string as declared.
pub fn call(name: &str, args: &[Value]) -> Result<String, FunctionError> {
    let text = |i: usize| {
        args.get(i)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| refused(format!("argument {i} is not a string"), Some(i as i64)))
    };
    match name {
        "slug" => {
            let given = text(0)?;
            let mut out = String::new();
            for c in given.chars().flat_map(char::to_lowercase) {
                if c.is_ascii_alphanumeric() {
                    out.push(c);
                } else if !out.ends_with('-') {
                    out.push('-');
                }
            }
            let out = out.trim_matches('-').to_string();
            match out.is_empty() {
                true => Err(refused(
                    format!("{given:?} has no letters or digits to make a slug of"),
                    Some(0),
                )),
                false => Ok(out),
            }
        }
        "tag" => {
            let parts: Result<Vec<String>, _> = (0..args.len()).map(text).collect();
            Ok(parts?.join(":"))
        }
        other => Err(refused(
            format!("stratatest has no function {other:?}"),
            None,
        )),
    }
}
