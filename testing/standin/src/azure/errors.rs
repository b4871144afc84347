//! Every error the Azure stand-in answers for Resource Manager is held to
//! ARM's common error shape (`testing/definitions/azure/errors.json`,
//! reduced from the REST API specifications' common types):
//! `{"error": ErrorDetail}`, an ErrorDetail's `code`, `message` and
//! `target` strings, its `details` ErrorDetails again and its
//! `additionalInfo` typed objects; a failed operation's `error` likewise.
//! A misfit is the stand-in's bug and answers 500 naming it.

use super::*;
use std::sync::OnceLock;

const ERRORS: &str = include_str!("../../../definitions/azure/errors.json");

fn shapes() -> &'static Json {
    static DOC: OnceLock<Json> = OnceLock::new();
    DOC.get_or_init(|| serde_json::from_str(ERRORS).unwrap_or_default())
}

/// A leaf of ARM's reduced shapes; `detail` is an ErrorDetail again.
fn leaf(name: &str, v: &Json, at: &str, out: &mut Vec<String>) -> Option<bool> {
    Some(match name {
        "detail" => {
            fits(&shapes()["ErrorDetail"], v, at, out);
            true
        }
        "string" => v.is_string(),
        "object" => v.is_object(),
        _ => return None,
    })
}

fn fits(shape: &Json, v: &Json, at: &str, out: &mut Vec<String>) {
    crate::shapes::fits(shape, v, at, out, &leaf);
}

/// Where an answer does not fit: an error answer as an ErrorResponse,
/// any other answer's `error` (a failed operation's) as an ErrorDetail.
pub(super) fn misfits(status: u16, body: &Json) -> Vec<String> {
    let mut out = Vec::new();
    if status >= 400 {
        if body["error"]["code"].as_str().is_none_or(str::is_empty) {
            out.push("$.error.code: missing".into());
        }
        fits(&shapes()["ErrorResponse"], body, "$", &mut out);
    } else if let Some(e) = body.get("error") {
        fits(&json!("detail"), e, "$.error", &mut out);
    }
    out
}

/// `answer` when it fits; else a 500 naming the misfit.
pub(super) fn judged(answer: Response<Body>) -> Response<Body> {
    let status = answer.status().as_u16();
    let (parts, body) = answer.into_parts();
    let bytes = crate::ready_bytes(body);
    let found = match serde_json::from_slice::<Json>(&bytes) {
        Ok(v) => misfits(status, &v),
        Err(_) if bytes.is_empty() => Vec::new(),
        Err(e) => vec![format!("$: not JSON: {e}")],
    };
    if found.is_empty() {
        return Response::from_parts(parts, Body::from(bytes));
    }
    error(
        500,
        "InternalServerError",
        &format!(
            "the stand-in's answer does not fit ARM's error shape: {}",
            found.join("; ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_held_to_arms_shape() {
        let good = json!({"error": {"code": "QuotaExceeded", "message": "m", "target": "t",
            "details": [{"code": "c", "message": "m"}],
            "additionalInfo": [{"type": "PolicyViolation", "info": {"a": 1}}]}});
        assert_eq!(misfits(409, &good), Vec::<String>::new());
        let bad = json!({"error": {"message": "m", "detail": [],
            "details": [{"code": 1}], "additionalInfo": [{"info": "x"}]}});
        let found = misfits(400, &bad);
        for want in [
            "$.error.code",
            "$.error.detail",
            "$.error.details[0].code",
            "$.error.additionalInfo[0].info",
        ] {
            assert!(
                found.iter().any(|f| f.starts_with(want)),
                "{want}: {found:?}"
            );
        }
        let failed_op =
            json!({"status": "Failed", "error": {"code": "X", "message": "m", "extra": 1}});
        assert_eq!(misfits(200, &failed_op).len(), 1);
    }
}
