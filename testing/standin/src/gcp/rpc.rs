//! Every error the GCP stand-in answers is held to the shape Google's
//! APIs give errors (`testing/definitions/google/rpc.json`, reduced from
//! googleapis' `google/rpc` definitions): `error.code` the HTTP status,
//! `error.status` a `google.rpc.Code` name, the legacy `errors[]` items
//! with their string fields, and each `details[]` entry a known
//! `google.rpc` type (`@type`) with its fields. A misfit is the
//! stand-in's bug and answers 500 naming it, as a definition misfit does.

use super::*;
use std::sync::OnceLock;

const RPC: &str = include_str!("../../../definitions/google/rpc.json");

fn rpc() -> &'static Json {
    static DOC: OnceLock<Json> = OnceLock::new();
    DOC.get_or_init(|| serde_json::from_str(RPC).unwrap_or_default())
}

/// A leaf of Google's reduced shapes.
fn leaf(name: &str, v: &Json, _at: &str, _out: &mut Vec<String>) -> Option<bool> {
    Some(match name {
        "string" | "duration" => v.is_string(),
        "integer" => v.is_u64() || v.is_i64(),
        "map" => v
            .as_object()
            .is_some_and(|m| m.values().all(Json::is_string)),
        "code" => rpc()["codes"]
            .as_array()
            .is_some_and(|c| c.iter().any(|n| n == v)),
        _ => return None,
    })
}

fn fits(shape: &Json, v: &Json, at: &str, out: &mut Vec<String>) {
    crate::shapes::fits(shape, v, at, out, &leaf);
}

/// Where an error answer with HTTP `status` does not fit Google's shape.
pub(super) fn misfits(status: u16, body: &Json) -> Vec<String> {
    let mut out = Vec::new();
    let Some(error) = body["error"].as_object() else {
        return vec!["$: no `error` object".into()];
    };
    if body["error"]["code"] != status {
        out.push(format!(
            "$.error.code: {} for HTTP {status}",
            body["error"]["code"]
        ));
    }
    for (k, v) in error {
        let at = format!("$.error.{k}");
        match rpc()["envelope"][k.as_str()].as_str() {
            Some("errors") => fits(&json!([rpc()["legacy_error"]]), v, &at, &mut out),
            Some("details") => details(v, &at, &mut out),
            Some(shape) => fits(&json!(shape), v, &at, &mut out),
            None => out.push(format!("{at}: not a field")),
        }
    }
    out
}

/// `details[]`: each a `google.rpc` type named by its `@type`.
fn details(v: &Json, at: &str, out: &mut Vec<String>) {
    for (i, d) in v.as_array().into_iter().flatten().enumerate() {
        let at = format!("{at}[{i}]");
        let name = d["@type"]
            .as_str()
            .and_then(|t| t.strip_prefix("type.googleapis.com/"));
        let Some(shape) = name.and_then(|n| rpc()["details"].get(n)) else {
            out.push(format!(
                "{at}: @type {} is no google.rpc detail",
                d["@type"]
            ));
            continue;
        };
        let mut fields = d.clone();
        fields.as_object_mut().map(|m| m.remove("@type"));
        fits(shape, &fields, &at, out);
    }
}

/// `answer` when it is a success or an error of Google's shape; else a
/// 500 naming the misfit.
pub(super) fn judged(answer: Response<Body>) -> Response<Body> {
    let status = answer.status().as_u16();
    if answer.status().is_success() {
        return answer;
    }
    let (parts, body) = answer.into_parts();
    let bytes = crate::ready_bytes(body);
    let found = match serde_json::from_slice::<Json>(&bytes) {
        Ok(v) => misfits(status, &v),
        Err(e) => vec![format!("$: not JSON: {e}")],
    };
    if found.is_empty() {
        return Response::from_parts(parts, Body::from(bytes));
    }
    let message = format!(
        "the stand-in's error does not fit Google's shape: {}",
        found.join("; ")
    );
    json(
        500,
        json!({"error": {"code": 500, "message": message, "status": "INTERNAL"}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_held_to_googles_shape() {
        let good = json!({"error": {"code": 403, "message": "m", "status": "PERMISSION_DENIED",
            "errors": [{"message": "m", "domain": "global", "reason": "forbidden"}],
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "R",
                "domain": "container.googleapis.com", "metadata": {"zone": "us-central1-a"}}]}});
        assert_eq!(misfits(403, &good), Vec::<String>::new());
        let bad = json!({"error": {"code": 403, "message": "m", "status": "FORBIDDEN",
            "errors": [{"reasons": "forbidden"}],
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "metadata": {"n": 1}},
                {"@type": "type.googleapis.com/google.rpc.Nope"}]}});
        let found = misfits(429, &bad);
        for want in [
            "$.error.code",
            "$.error.status",
            "$.error.errors[0].reasons",
            "$.error.details[0].metadata",
            "$.error.details[1]",
        ] {
            assert!(
                found.iter().any(|f| f.starts_with(want)),
                "{want}: {found:?}"
            );
        }
    }

    /// Every error the stand-in can give in answer to a request is of
    /// Google's shape: an unknown URL, a refused field, a missing object.
    #[test]
    fn the_stand_ins_own_errors_fit() {
        for r in [
            not_found("projects/p/zones/z/instances/i"),
            bad("no"),
            err(409, "ALREADY_EXISTS", "conflict", "taken"),
            google_rpc(403, "RESOURCE_EXHAUSTED", "short"),
        ] {
            let status = r.status().as_u16();
            let body: Json =
                serde_json::from_slice(&crate::ready_bytes(r.into_body())).unwrap_or_default();
            assert_eq!(misfits(status, &body), Vec::<String>::new(), "{body}");
        }
    }
}
