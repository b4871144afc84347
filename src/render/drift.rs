//! `strata drift`'s report: what refresh found changed or deleted outside
//! strata, per resource and attribute, as text, JSON or a markdown issue
//! body. Its input is the plan's drift entries; how they were found is the
//! plan's business.

use crate::lang::json::plain_json;
use crate::lang::value::Value;
use crate::plan::{ResourceChange, Schemas};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeSet;

/// One attribute that differs between the state and the real object.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    /// `tags["Name"]`, `ingress`, `cidr_block`: Terraform's path syntax.
    pub path: String,
    pub before: Json,
    pub after: Json,
    /// Either side was sensitive: both values are withheld.
    pub sensitive: bool,
}

/// The attributes of `before` and `after` that differ, leaves first where
/// both sides are objects or maps; lists and sets are compared whole.
pub fn changed_attributes(before: &Value, after: &Value) -> Vec<Changed> {
    let mut out = Vec::new();
    walk(before, after, String::new(), &mut out);
    out
}

fn walk(before: &Value, after: &Value, path: String, out: &mut Vec<Changed>) {
    let nested = |v: &Value| match v.unmarked() {
        Value::Object(m) => Some((m.clone(), true)),
        Value::Map(_, m) => Some((m.clone(), false)),
        _ => None,
    };
    if let (Some((b, object)), Some((a, _))) = (nested(before), nested(after)) {
        if !before.is_sensitive() && !after.is_sensitive() {
            let keys: BTreeSet<&String> = b.keys().chain(a.keys()).collect();
            for k in keys {
                let step = if object && crate::lang::display::is_identifier(k) {
                    if path.is_empty() {
                        k.to_string()
                    } else {
                        format!("{path}.{k}")
                    }
                } else {
                    format!("{path}[{}]", Json::String(k.to_string()))
                };
                let null = Value::null();
                walk(
                    b.get(k.as_str()).unwrap_or(&null),
                    a.get(k.as_str()).unwrap_or(&null),
                    step,
                    out,
                );
            }
            return;
        }
    }
    if crate::plan::same(before, after) {
        return;
    }
    let (b, b_marked) = before.clone().unmark_deep();
    let (a, a_marked) = after.clone().unmark_deep();
    let sensitive = b_marked || a_marked;
    let shown = |v: &Value| if sensitive { Json::Null } else { plain_json(v) };
    out.push(Changed {
        path,
        before: shown(&b),
        after: shown(&a),
        sensitive,
    });
}

fn action(c: &ResourceChange) -> &'static str {
    if c.after.is_some() {
        "update"
    } else {
        "delete"
    }
}

fn attributes(c: &ResourceChange) -> Vec<Changed> {
    match (&c.before, &c.after) {
        (Some(b), Some(a)) => changed_attributes(b, a),
        _ => Vec::new(),
    }
}

fn counts(drift: &[ResourceChange]) -> (usize, usize) {
    let deleted = drift.iter().filter(|c| c.after.is_none()).count();
    (drift.len() - deleted, deleted)
}

/// The text report: Terraform's "objects have changed outside" section.
pub fn human(drift: &[ResourceChange], schemas: &Schemas) -> String {
    if drift.is_empty() {
        return "No drift. The real infrastructure matches the state.\n".into();
    }
    let mut out = crate::render::human::drift_section(drift, schemas, "");
    let (changed, deleted) = counts(drift);
    out.push_str(&format!(
        "\nDrift: {changed} changed, {deleted} deleted outside strata.\n"
    ));
    out
}

/// The JSON report (documented in README): strata's own per-attribute
/// entries, and Terraform's `resource_drift` entries of its plan JSON.
pub fn json(drift: &[ResourceChange]) -> Json {
    let (changed, deleted) = counts(drift);
    let entries: Vec<Json> = drift
        .iter()
        .map(|c| {
            let mut o = Map::new();
            o.insert("address".into(), json!(c.addr.to_string()));
            if !c.addr.id.module.is_root() {
                o.insert("module_address".into(), json!(c.addr.id.module.to_string()));
            }
            o.insert("type".into(), json!(c.addr.id.type_name));
            o.insert("name".into(), json!(c.addr.id.name));
            if let Some(d) = &c.deposed {
                o.insert("deposed".into(), json!(d));
            }
            o.insert("action".into(), json!(action(c)));
            let attrs: Vec<Json> = attributes(c)
                .into_iter()
                .map(|a| {
                    json!({
                        "path": a.path,
                        "before": a.before,
                        "after": a.after,
                        "sensitive": a.sensitive,
                    })
                })
                .collect();
            o.insert("changed_attributes".into(), Json::Array(attrs));
            Json::Object(o)
        })
        .collect();
    let report = json!({
        "format_version": "1.0",
        "strata_version": env!("CARGO_PKG_VERSION"),
        "drift_detected": !drift.is_empty(),
        "summary": { "changed": changed, "deleted": deleted },
        "drift": entries,
        "resource_drift": drift.iter().map(|c| crate::render::json::resource_change(&redacted(c))).collect::<Vec<_>>(),
    });
    report
}

/// `c` with every sensitive value replaced by a null of its type, still
/// marked: Terraform's plan JSON would print them (its masks only say
/// where they are), and a drift report goes to issues and logs.
fn redacted(c: &ResourceChange) -> ResourceChange {
    fn redact(v: &Value) -> Value {
        match v {
            Value::Sensitive(inner) => Value::Null(inner.ty()).mark(),
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, x)| (k.clone(), redact(x))).collect())
            }
            Value::Map(t, m) => Value::Map(
                t.clone(),
                m.iter().map(|(k, x)| (k.clone(), redact(x))).collect(),
            ),
            Value::List(t, xs) => Value::List(t.clone(), xs.iter().map(redact).collect()),
            Value::Set(t, xs) => Value::Set(t.clone(), xs.iter().map(redact).collect()),
            Value::Tuple(xs) => Value::Tuple(xs.iter().map(redact).collect()),
            other => other.clone(),
        }
    }
    let mut c = c.clone();
    c.before = c.before.as_ref().map(redact);
    c.after = c.after.as_ref().map(redact);
    c
}

/// A markdown issue body: counts first, a table of what changed, the full
/// report collapsed.
/// The drift report's JSON, with each placed pool and the GPUs its nodes
/// offer now (`ready_gpus_now`).
pub fn report_json(
    drift: &[ResourceChange],
    placements: &[crate::placement::Decision],
    ready: &std::collections::BTreeMap<String, u64>,
) -> String {
    let mut report = json(drift);
    if let (Some(o), false) = (report.as_object_mut(), placements.is_empty()) {
        let mut placed = crate::placement::to_json(placements);
        for p in placed.as_array_mut().into_iter().flatten() {
            let pool = p["pool"].as_str().unwrap_or_default().to_string();
            p["ready_gpus_now"] = json!(ready.get(&pool));
        }
        o.insert("placements".into(), placed);
    }
    format!("{report}\n")
}

pub fn markdown(drift: &[ResourceChange], schemas: &Schemas) -> String {
    if drift.is_empty() {
        return format!(
            "### strata drift: none\n\nThe real infrastructure matches the state.\n{}",
            crate::comment::drift_marker(false)
        );
    }
    let (changed, deleted) = counts(drift);
    let mut out =
        format!("### strata drift: {changed} changed, {deleted} deleted outside strata\n\n");
    out.push_str("| resource | outside strata |\n| --- | --- |\n");
    for c in drift {
        let what = if c.after.is_none() {
            "deleted".to_string()
        } else {
            attributes(c)
                .iter()
                .map(|a| {
                    if a.sensitive {
                        format!("`{}` (sensitive value)", a.path)
                    } else {
                        format!("`{}`: `{}` → `{}`", a.path, a.before, a.after)
                    }
                })
                .collect::<Vec<_>>()
                .join("<br>")
        };
        out.push_str(&format!(
            "| `{}` | {} |\n",
            c.addr,
            what.replace('|', "\\|")
        ));
    }
    let mut out = crate::render::markdown::with_details(
        out,
        "Full report",
        &crate::render::human::drift_section(drift, schemas, ""),
        "the report is cut here to fit; run `strata drift` for all of it",
    );
    out.push_str(&crate::comment::drift_marker(true));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::value::Attrs;

    fn obj(entries: Vec<(&str, Value)>) -> Value {
        Value::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect::<Attrs>(),
        )
    }

    #[test]
    fn paths_name_what_changed_and_secrets_stay_secret() {
        let before = obj(vec![
            ("name", Value::string("a")),
            (
                "tags",
                Value::Map(
                    crate::lang::types::Type::String,
                    Attrs::from([("team x", Value::string("ml"))]),
                ),
            ),
            ("password", Value::string("hunter2").mark()),
            ("same", Value::string("s")),
        ]);
        let after = obj(vec![
            ("name", Value::string("b")),
            (
                "tags",
                Value::Map(
                    crate::lang::types::Type::String,
                    Attrs::from([("team x", Value::string("ops"))]),
                ),
            ),
            ("password", Value::string("swordfish").mark()),
            ("same", Value::string("s")),
        ]);
        let got = changed_attributes(&before, &after);
        let paths: Vec<&str> = got.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["name", "password", r#"tags["team x"]"#]);
        assert_eq!(got[0].before, json!("a"));
        assert_eq!(got[0].after, json!("b"));
        assert!(got[1].sensitive);
        assert_eq!((&got[1].before, &got[1].after), (&Json::Null, &Json::Null));
        assert_eq!(got[2].after, json!("ops"));
        assert!(!format!("{got:?}").contains("hunter2"));

        let change = ResourceChange {
            addr: strata_state::model::Address::parse("t.n").expect("address"),
            deposed: None,
            tainted: false,
            previous_addr: None,
            provider: "provider[\"example.com/t\"]".into(),
            action: crate::plan::Action::Update,
            reason: None,
            before: Some(before),
            after: Some(after),
            replace_paths: Vec::new(),
            schema_version: 0,
            kept_before: Default::default(),
            kept_after: Default::default(),
            dependencies: Vec::new(),
            create_before_destroy: false,
            skip_destroy: false,
            importing: None,
        };
        let v = super::json(&[change]);
        let report = v.to_string();
        assert!(
            !report.contains("hunter2") && !report.contains("swordfish"),
            "{report}"
        );
        assert_eq!(
            v["resource_drift"][0]["change"]["before_sensitive"]["password"],
            true
        );
        assert_eq!(v["drift"][0]["changed_attributes"][1]["sensitive"], true);
    }
}
