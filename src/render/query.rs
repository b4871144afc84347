//! `query`'s results as Terraform shows them: per list block a line for
//! each object found (its address, its identity as `key=value` pairs
//! padded to the widest, its display name), a warning naming the blocks
//! that found nothing; and under `-json`, Terraform's `list_start`,
//! `list_resource_found` and `list_complete` messages.

use crate::plan::Queried;
use serde_json::json;

pub fn human(q: &Queried) -> String {
    let mut out = String::new();
    for l in q.lists.iter().filter(|l| !l.found.is_empty()) {
        let identities: Vec<String> = l
            .found
            .iter()
            .map(|f| crate::plan::identity_text(&f.identity))
            .collect();
        let width = identities.iter().map(String::len).max().unwrap_or(0);
        for (f, identity) in l.found.iter().zip(&identities) {
            out.push_str(&format!(
                "{}   {identity:<width$}   {}\n",
                l.address, f.display_name
            ));
        }
        out.push('\n');
    }
    let empty: Vec<&str> = q
        .lists
        .iter()
        .filter(|l| l.found.is_empty())
        .map(|l| l.address.as_str())
        .collect();
    if !empty.is_empty() {
        out.push_str(&format!(
            "Warning: list block(s) [{}] returned 0 results.\n\n",
            empty.join(", ")
        ));
    }
    out
}

/// The messages, after the stream's opening one for `language`.
pub fn json_lines(q: &Queried, language: &str) -> Vec<String> {
    let mut out = vec![crate::ui::version(language)];
    for l in &q.lists {
        let start = json!({
            "address": l.address,
            "resource_type": l.type_name,
            "input_config": crate::lang::json::plain_json(&l.config),
        });
        let said = format!("{}: Starting query...", l.address);
        out.push(crate::ui::line(
            "info",
            &said,
            "list_start",
            json!({ "list_start": start }),
        ));
        for (i, f) in l.found.iter().enumerate() {
            let mut found = json!({
                "address": l.address,
                "display_name": f.display_name,
                "identity": f.identity,
                "identity_version": l.identity_version,
                "resource_type": l.type_name,
            });
            if let Some(o) = &f.object {
                found["resource_object"] = crate::lang::json::plain_json(o);
            }
            if let Some(g) = l.generated.get(i) {
                found["config"] = json!(g.resource);
                found["import_config"] = json!(g.import);
            }
            let said = format!("{}: Result found", l.address);
            out.push(crate::ui::line(
                "info",
                &said,
                "list_resource_found",
                json!({ "list_resource_found": found }),
            ));
        }
        let complete =
            json!({ "address": l.address, "resource_type": l.type_name, "total": l.found.len() });
        let said = format!("{}: List complete", l.address);
        out.push(crate::ui::line(
            "info",
            &said,
            "list_complete",
            json!({ "list_complete": complete }),
        ));
    }
    out
}
