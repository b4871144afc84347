//! The `external` provider (hashicorp/external): the `external` data
//! source runs a program with the query as a JSON object on its standard
//! input and reads a JSON object of strings from its standard output.

use crate::common::{failed, get, invalid, string, with};
use crate::provider::{DataSource, Provider};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::io::{Seek, Write};
use std::process::Stdio;
use strata_provider::values::{map_value, string_map, strings};
use strata_provider::{AttributeSchema, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

pub(crate) fn provider() -> Provider {
    Provider::new("external", "hashicorp/external").data_source("external", External)
}

struct External;

fn run_failed(detail: String) -> DriverError {
    failed("external", "read", detail)
}

/// An unnamed file holding `query`, read from its start.
fn query_file(query: &[u8]) -> std::io::Result<std::fs::File> {
    let mut f = tempfile::tempfile()?;
    f.write_all(query)?;
    f.rewind()?;
    Ok(f)
}

/// The program's answer: a JSON object whose values are all strings.
fn result_of(stdout: &[u8]) -> Option<BTreeMap<String, String>> {
    let json: serde_json::Value = serde_json::from_slice(stdout).ok()?;
    json.as_object()?
        .iter()
        .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

#[async_trait]
impl DataSource for External {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            (
                "program",
                AttributeSchema::required(
                    Type::list(Type::String),
                    "The program and its arguments.",
                ),
            ),
            (
                "working_dir",
                AttributeSchema::optional(Type::String, "Where the program runs (default: here)."),
            ),
            (
                "query",
                AttributeSchema::optional(
                    Type::map(Type::String),
                    "Sent to the program as a JSON object.",
                ),
            ),
            (
                "result",
                AttributeSchema::computed(Type::map(Type::String), "The program's JSON object."),
            ),
            (
                "id",
                AttributeSchema::computed(Type::String, "Always \"-\"."),
            ),
        ])
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        match get(config, "program") {
            Some(p) if p.is_known() && !p.is_null() && p.len() == Some(0) => vec![invalid(
                "program",
                "Attribute program list must contain at least 1 elements, got: 0".to_string(),
            )],
            _ => Vec::new(),
        }
    }

    async fn read(&self, config: &Value) -> Result<Value, DriverError> {
        let program = strings(config, "program");
        let Some((name, args)) = program.split_first() else {
            return Err(run_failed("the program list is empty".to_string()));
        };
        let query = serde_json::to_vec(&string_map(config, "query"))
            .map_err(|e| run_failed(e.to_string()))?;
        // The query reaches the program from a file rather than a pipe:
        // a program that exits without reading would otherwise end strata
        // with SIGPIPE, which the binary leaves at its default action.
        let stdin =
            query_file(&query).map_err(|e| run_failed(format!("cannot pass the query: {e}")))?;
        let mut command = tokio::process::Command::new(name);
        command
            .args(args)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = string(config, "working_dir").filter(|d| !d.is_empty()) {
            command.current_dir(dir);
        }
        let child = command.spawn().map_err(|e| {
            run_failed(format!(
                "External Program Lookup Failed: cannot run {name:?}: {e}"
            ))
        })?;
        let out = child
            .wait_with_output()
            .await
            .map_err(|e| run_failed(format!("External Program Execution Failed: {name}: {e}")))?;
        if !out.status.success() {
            return Err(run_failed(format!(
                "External Program Execution Failed: the program {name} ended with {}; its error output: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let result = result_of(&out.stdout).ok_or_else(|| {
            run_failed(format!(
                "Unexpected External Program Results: the output of {name} must be a JSON object of string keys and string values, got: {}",
                String::from_utf8_lossy(&out.stdout).trim()
            ))
        })?;
        Ok(with(
            config,
            vec![("result", map_value(&result)), ("id", Value::string("-"))],
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_object_of_strings_is_a_result() {
        assert_eq!(
            result_of(br#"{"a":"1"}"#),
            Some(BTreeMap::from([("a".to_string(), "1".to_string())]))
        );
        assert_eq!(result_of(br#"{"a":1}"#), None);
        assert_eq!(result_of(b"[]"), None);
        assert_eq!(result_of(b"not json"), None);
    }
}
