//! Command-line forms from Terraform after 1.11, taken as the newer
//! Terraform takes them (its changelog and pull requests named beside
//! each): `workspace list -json` (1.16, hashicorp/terraform#38397),
//! `state show -json` (1.15, hashicorp/terraform#38341).

#[path = "common/run.rs"]
mod run;

use run::strata_in;
use serde_json::Value as Json;

#[test]
fn workspace_list_json_is_one_document_whatever_happens() {
    let dir = std::env::temp_dir().join(format!("strata-newer-ws-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("main.tf"),
        "resource \"terraform_data\" \"a\" {}\n",
    )
    .expect("config");
    assert_eq!(strata_in(&dir, &["apply", "-auto-approve"]).0, 0);
    assert_eq!(strata_in(&dir, &["workspace", "new", "dev"]).0, 0);
    let (code, out) = strata_in(&dir, &["workspace", "list", "-json"]);
    assert_eq!(code, 0, "{out}");
    let doc: Json = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(
        doc,
        serde_json::json!({
            "format_version": "1.0",
            "workspaces": [
                {"name": "default", "is_current": false},
                {"name": "dev", "is_current": true},
            ],
            "diagnostics": [],
        })
    );
    // A backend it cannot open: the same shape, the error in it, exit 1.
    std::fs::write(
        dir.join("main.tf"),
        "terraform {\n  backend \"s3\" {\n  }\n}\n",
    )
    .expect("config");
    let (code, out) = strata_in(&dir, &["workspace", "list", "-json"]);
    assert_eq!(code, 1, "{out}");
    let doc: Json = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(doc["workspaces"], serde_json::json!([]), "{out}");
    assert_eq!(doc["diagnostics"][0]["severity"], "error", "{out}");
    assert_eq!(
        doc["diagnostics"][0]["range"]["filename"], "main.tf",
        "{out}"
    );
}

#[test]
fn state_show_json_is_the_instance_as_show_json_writes_it() {
    let dir = std::env::temp_dir().join(format!("strata-newer-show-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("main.tf"),
        "resource \"terraform_data\" \"a\" {\n  input = \"x\"\n}\n",
    )
    .expect("config");
    assert_eq!(strata_in(&dir, &["apply", "-auto-approve"]).0, 0);
    let (code, out) = strata_in(&dir, &["state", "show", "-json", "terraform_data.a"]);
    assert_eq!(code, 0, "{out}");
    let doc: Json = serde_json::from_str(&out).expect("one JSON document");
    let (code, shown) = strata_in(&dir, &["show", "-json"]);
    assert_eq!(code, 0, "{shown}");
    let shown: Json = serde_json::from_str(&shown).expect("show -json");
    let from_show = &shown["values"]["root_module"]["resources"][0];
    assert_eq!(doc["format_version"], "1.0");
    assert_eq!(doc["diagnostics"], serde_json::json!([]));
    for key in [
        "address",
        "mode",
        "type",
        "name",
        "provider_name",
        "schema_version",
        "values",
        "sensitive_values",
    ] {
        assert_eq!(doc["resource"][key], from_show[key], "{key}: {out}");
    }
    let (code, out) = strata_in(&dir, &["state", "show", "-json", "terraform_data.nope"]);
    assert_eq!(code, 1, "{out}");
    let doc: Json = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(doc["resource"]["address"], "", "{out}");
    assert_eq!(doc["diagnostics"][0]["severity"], "error", "{out}");
}
