//! Reading configuration values and building objects: the small vocabulary
//! every resource here speaks.

use crate::{AttributeSchema as A, BlockNesting, BlockSchema, DriverError, ResourceSchema};
use std::collections::BTreeMap;
use std::future::Future;
use strata_value::types::Type;
use strata_value::value::Value;

pub fn get<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    v.unmarked()
        .entries()?
        .get(name)
        .filter(|x| !x.unmarked().is_null())
}

pub fn string(v: &Value, name: &str) -> Option<String> {
    get(v, name).and_then(|x| x.as_str()).map(str::to_string)
}

/// A string the configuration must hold; the schema makes it required, so
/// its absence is the engine's bug or a driver's, reported as such.
pub fn required(v: &Value, type_name: &str, name: &str) -> Result<String, DriverError> {
    string(v, name).ok_or_else(|| DriverError::InvalidConfig {
        type_name: type_name.to_string(),
        detail: format!("{name:?} is required"),
    })
}

pub fn boolean(v: &Value, name: &str) -> Option<bool> {
    get(v, name).and_then(Value::as_bool)
}

pub fn number(v: &Value, name: &str) -> Option<i64> {
    get(v, name)
        .and_then(Value::as_number)
        .and_then(|n| n.to_i64())
}

/// A `map(string)` attribute as pairs.
pub fn string_map(v: &Value, name: &str) -> BTreeMap<String, String> {
    get(v, name)
        .and_then(|m| m.unmarked().entries().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(k, x)| x.as_str().map(|s| (k, s.to_string())))
        .collect()
}

pub fn str_value(s: Option<&str>) -> Value {
    match s {
        Some(s) => Value::string(s),
        None => Value::Null(Type::String),
    }
}

pub fn bool_value(b: Option<bool>) -> Value {
    match b {
        Some(b) => Value::Bool(b),
        None => Value::Null(Type::Bool),
    }
}

pub fn map_value(m: &BTreeMap<String, String>) -> Value {
    Value::Map(
        Type::String,
        m.iter()
            .map(|(k, v)| (k.clone(), Value::string(v)))
            .collect(),
    )
}

/// An object from pairs.
pub fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// A `list(string)` or `set(string)` attribute's strings.
pub fn strings(v: &Value, name: &str) -> Vec<String> {
    get(v, name)
        .and_then(|l| l.unmarked().elements().map(<[Value]>::to_vec))
        .unwrap_or_default()
        .iter()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect()
}

pub fn string_set(items: &[String]) -> Value {
    Value::new_set(Type::String, items.iter().map(Value::string).collect())
}

pub fn string_list(items: &[String]) -> Value {
    Value::List(Type::String, items.iter().map(Value::string).collect())
}

/// A nested block of attributes.
pub fn block(nesting: BlockNesting, min: usize, attributes: Vec<(&str, A)>) -> BlockSchema {
    BlockSchema {
        computed: false,
        nesting,
        min_items: min,
        max_items: (nesting == BlockNesting::Single).then_some(1),
        schema: ResourceSchema::of_attributes(attributes),
        deprecated: false,
    }
}

/// Terraform's `timeouts { create = "30m" ... }` block.
pub fn timeouts_block() -> BlockSchema {
    timeouts_of(&["create", "update", "delete"])
}

/// A `timeouts` block with only these operations, as a provider declares
/// it for a type that has no update (or no create) of its own.
pub fn timeouts_of(operations: &[&str]) -> BlockSchema {
    let what = |op: &str| match op {
        "create" => "How long a create may take.",
        "update" => "How long an update may take.",
        "read" => "How long a read may take.",
        _ => "How long a delete may take.",
    };
    block(
        BlockNesting::Single,
        0,
        operations
            .iter()
            .map(|op| (*op, A::optional(Type::String, what(op))))
            .collect(),
    )
}

/// A block written at most once but addressed as a list (`x.ebs[0]`), as
/// the Terraform AWS provider declares most nested settings.
pub fn list_block_max1(attributes: Vec<(&str, A)>) -> BlockSchema {
    BlockSchema {
        max_items: Some(1),
        ..block(BlockNesting::List, 0, attributes)
    }
}

/// A block at most one of which is written, kept as a list of it (as the
/// Terraform AWS provider keeps most): required ones take `min` 1.
pub fn list_block_one(min: usize, attributes: Vec<(&str, A)>) -> BlockSchema {
    BlockSchema {
        min_items: min,
        ..list_block_max1(attributes)
    }
}

/// The one element of a list block written at most once.
pub fn one_block(v: &Value, name: &str) -> Option<Value> {
    blocks(v, name).into_iter().next()
}

/// `element` as the value of a list block of at most one (`None`: none).
pub fn list_of_one(block: &BlockSchema, element: Option<Value>) -> Value {
    Value::List(block.schema.object_type(), element.into_iter().collect())
}

/// The elements of a list or set block.
pub fn blocks(v: &Value, name: &str) -> Vec<Value> {
    get(v, name)
        .and_then(|l| l.unmarked().elements().map(<[Value]>::to_vec))
        .unwrap_or_default()
}

/// An `i64` as an optional `i32`, as the SDK's request builders take them.
pub fn int32(v: &Value, name: &str) -> Option<i32> {
    number(v, name).and_then(|n| i32::try_from(n).ok())
}

pub fn int_value(n: Option<i32>) -> Value {
    match n {
        Some(n) => Value::int(n as i64),
        None => Value::Null(Type::Number),
    }
}

/// Whether two attribute values hold the same data, whatever their types
/// and marks; a value not yet known is never the same as anything.
pub fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    let json =
        |v: Option<&Value>| v.map_or(serde_json::Value::Null, strata_value::json::plain_json);
    let known = |v: Option<&Value>| v.is_none_or(Value::is_wholly_known);
    known(a) && known(b) && json(a) == json(b)
}

/// Reads objects one Get call each, for APIs without a batch read (IAM,
/// S3): `key` names an object, `get` reads it.
pub async fn each<K, F, Fut>(
    objs: &[Value],
    key: impl Fn(&Value) -> Option<K>,
    get: F,
) -> Result<Vec<Option<Value>>, DriverError>
where
    F: Fn(K) -> Fut,
    Fut: Future<Output = Result<Option<Value>, DriverError>>,
{
    let mut out = Vec::with_capacity(objs.len());
    for o in objs {
        out.push(match key(o) {
            Some(k) => get(k).await?,
            None => None,
        });
    }
    Ok(out)
}

/// An import id in two parts, `A<sep>B`; `form` says it in the error.
pub fn id_pair<'a>(
    id: &'a str,
    sep: char,
    type_name: &str,
    form: &str,
) -> Result<(&'a str, &'a str), DriverError> {
    id.split_once(sep)
        .ok_or_else(|| DriverError::InvalidConfig {
            type_name: type_name.to_string(),
            detail: format!("import id {id:?} must be {form}"),
        })
}

/// A unique name for an object the configuration does not name, as
/// Terraform makes `terraform-<timestamp>` names.
pub fn generated_name(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{prefix}{nanos:x}")
}
