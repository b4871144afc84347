//! Terraform attributes ↔ API fields, declared once per resource type as
//! a table instead of hand-written conversions both ways. Both sides are
//! JSON: the Terraform side as `strata_value::json::plain_json` writes an
//! object (and `value_from_json` reads it back by the schema), the API
//! side as the cloud documents it (camelCase, dotted paths for nesting).

use serde_json::{Map, Value as Json};

#[derive(Debug)]
pub struct Field {
    /// The Terraform attribute or block name.
    pub attr: &'static str,
    /// The API field, `.`-separated for nesting: `routingConfig.routingMode`.
    pub api: &'static str,
    pub kind: Kind,
    /// Sent on create and update; output-only fields are not.
    pub write: bool,
}

#[derive(Debug)]
pub enum Kind {
    /// The same JSON on both sides (strings, bools, numbers, string lists, maps).
    Plain,
    /// A number Terraform holds as a number and the API as a decimal string
    /// (Google's int64 fields).
    Int64,
    /// A block written at most once (a list of one in Terraform) ↔ an object.
    Object(&'static [Field]),
    /// A repeated block ↔ an array of objects.
    Array(&'static [Field]),
}

pub const fn f(attr: &'static str, api: &'static str) -> Field {
    Field {
        attr,
        api,
        kind: Kind::Plain,
        write: true,
    }
}

/// An output-only field.
pub const fn out(attr: &'static str, api: &'static str) -> Field {
    Field {
        attr,
        api,
        kind: Kind::Plain,
        write: false,
    }
}

pub const fn int64(attr: &'static str, api: &'static str) -> Field {
    Field {
        attr,
        api,
        kind: Kind::Int64,
        write: true,
    }
}

pub const fn object(attr: &'static str, api: &'static str, fields: &'static [Field]) -> Field {
    Field {
        attr,
        api,
        kind: Kind::Object(fields),
        write: true,
    }
}

pub const fn array(attr: &'static str, api: &'static str, fields: &'static [Field]) -> Field {
    Field {
        attr,
        api,
        kind: Kind::Array(fields),
        write: true,
    }
}

/// The API body for the writable fields of `tf` (null attributes left out).
pub fn to_api(fields: &[Field], tf: &Json) -> Json {
    let mut out = Json::Object(Map::new());
    for fd in fields.iter().filter(|f| f.write) {
        let Some(v) = tf.get(fd.attr).filter(|v| !v.is_null()) else {
            continue;
        };
        let converted = match &fd.kind {
            Kind::Plain => v.clone(),
            Kind::Int64 => match v {
                Json::Number(n) => Json::String(n.to_string()),
                other => other.clone(),
            },
            Kind::Object(inner) => match first(v) {
                Some(o) => to_api(inner, o),
                None => continue,
            },
            Kind::Array(inner) => Json::Array(
                v.as_array()
                    .map(|a| a.iter().map(|o| to_api(inner, o)).collect())
                    .unwrap_or_default(),
            ),
        };
        set(&mut out, fd.api, converted);
    }
    out
}

/// The Terraform-side object for every field `api` holds; absent fields
/// are left out (they read back as null).
pub fn from_api(fields: &[Field], api: &Json) -> Json {
    let mut out = Map::new();
    for fd in fields {
        let Some(v) = get(api, fd.api).filter(|v| !v.is_null()) else {
            continue;
        };
        let converted = match &fd.kind {
            Kind::Plain | Kind::Int64 => v.clone(),
            Kind::Object(inner) => Json::Array(vec![from_api(inner, v)]),
            Kind::Array(inner) => Json::Array(
                v.as_array()
                    .map(|a| a.iter().map(|o| from_api(inner, o)).collect())
                    .unwrap_or_default(),
            ),
        };
        out.insert(fd.attr.to_string(), converted);
    }
    Json::Object(out)
}

/// Terraform-shaped JSON read back as a value of `schema`'s type (absent
/// repeated blocks as empty lists); `type_name` names it in the error.
pub fn to_value(
    schema: &strata_provider::ResourceSchema,
    type_name: &str,
    j: &Json,
) -> Result<strata_value::value::Value, strata_provider::DriverError> {
    let mut j = j.clone();
    empty_blocks(schema, &mut j);
    strata_value::json::value_from_json(&j, &schema.object_type()).map_err(|e| {
        strata_provider::DriverError::Api {
            operation: format!("reading {type_name}"),
            detail: format!("the API's answer does not fit the schema: {e}"),
            retryable: false,
        }
    })
}

/// Absent repeated blocks as Terraform holds them: empty lists, not null
/// (an API leaves out an empty array; a configuration without the block
/// has none of it), at every depth.
pub fn empty_blocks(schema: &strata_provider::ResourceSchema, j: &mut Json) {
    let Some(m) = j.as_object_mut() else { return };
    for (name, b) in &schema.blocks {
        let v = m.entry(name.clone()).or_insert(Json::Null);
        if v.is_null() && b.nesting != strata_provider::BlockNesting::Single {
            *v = Json::Array(Vec::new());
        }
        match v {
            Json::Array(items) => items.iter_mut().for_each(|i| empty_blocks(&b.schema, i)),
            Json::Object(_) => empty_blocks(&b.schema, v),
            _ => {}
        }
    }
}

/// A block's one object: Terraform writes it as a list of one, or as an
/// object for a single-nested block.
fn first(v: &Json) -> Option<&Json> {
    match v {
        Json::Array(a) => a.first(),
        Json::Object(_) => Some(v),
        _ => None,
    }
}

/// The value at a dotted path.
pub fn get<'j>(j: &'j Json, path: &str) -> Option<&'j Json> {
    path.split('.').try_fold(j, |j, k| j.get(k))
}

/// Sets the value at a dotted path, making objects on the way.
pub fn set(j: &mut Json, path: &str, v: Json) {
    let mut cur = j;
    let mut parts = path.split('.').peekable();
    while let Some(k) = parts.next() {
        if !cur.is_object() {
            *cur = Json::Object(Map::new());
        }
        let Json::Object(m) = cur else { return };
        if parts.peek().is_none() {
            m.insert(k.to_string(), v);
            return;
        }
        cur = m.entry(k.to_string()).or_insert(Json::Object(Map::new()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const RANGE: &[Field] = &[
        f("range_name", "rangeName"),
        f("ip_cidr_range", "ipCidrRange"),
    ];
    const FIELDS: &[Field] = &[
        f("name", "name"),
        f("routing_mode", "routingConfig.routingMode"),
        int64("disk_size_gb", "diskSizeGb"),
        object(
            "autoscaling",
            "autoscaling",
            &[f("min_node_count", "minNodeCount")],
        ),
        array("secondary_ip_range", "secondaryIpRanges", RANGE),
        out("self_link", "selfLink"),
    ];

    #[test]
    fn terraform_attributes_become_api_fields_and_back() {
        let tf = json!({
            "name": "net",
            "routing_mode": "GLOBAL",
            "disk_size_gb": 100,
            "autoscaling": [{"min_node_count": 0}],
            "secondary_ip_range": [{"range_name": "pods", "ip_cidr_range": "10.4.0.0/14"}],
            "self_link": "ignored on the way out",
            "description": null,
        });
        let api = to_api(FIELDS, &tf);
        assert_eq!(
            api,
            json!({
                "name": "net",
                "routingConfig": {"routingMode": "GLOBAL"},
                "diskSizeGb": "100",
                "autoscaling": {"minNodeCount": 0},
                "secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"}],
            })
        );
        let mut echoed = api.clone();
        set(&mut echoed, "selfLink", json!("https://x/net"));
        let back = from_api(FIELDS, &echoed);
        assert_eq!(back["routing_mode"], "GLOBAL");
        assert_eq!(back["autoscaling"], json!([{"min_node_count": 0}]));
        assert_eq!(back["self_link"], "https://x/net");
        assert_eq!(
            back["disk_size_gb"], "100",
            "read back by the schema as a number"
        );
        assert!(back.get("description").is_none());
    }
}
