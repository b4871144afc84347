//! strata's plugin client against the test provider: every RPC a plan and
//! an apply use, over go-plugin's handshake and AutoMTLS, the way strata
//! runs Terraform providers. (Terraform itself loads the same binary in
//! the main crate's tests.)

use serde_json::json;
use std::path::PathBuf;
use strata_plugin::msgpack;
use strata_plugin::proto::tfplugin6 as v6;
use strata_plugin::schema::block_type;
use strata_plugin::{Launch, LaunchError, Provider};
use strata_value::json::{value_from_json, value_to_json};
use strata_value::types::Type;
use strata_value::value::Value;

const OBJECT: &str = "stratatest_object";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_terraform-provider-stratatest"))
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("stratatest-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn dynamic(v: &Value, ty: &Type) -> Option<v6::DynamicValue> {
    Some(v6::DynamicValue {
        msgpack: msgpack::encode(v, ty).unwrap(),
        json: Vec::new(),
    })
}

fn value(d: Option<v6::DynamicValue>, ty: &Type) -> Value {
    msgpack::decode(&d.unwrap().msgpack, ty).unwrap()
}

fn json_of(v: &Value, ty: &Type) -> serde_json::Value {
    value_to_json(v, ty).unwrap()
}

fn errors(diags: &[v6::Diagnostic]) -> Vec<String> {
    diags.iter().map(|d| d.summary.clone()).collect()
}

/// The schema's types: the object's and the provider block's.
async fn types(p: &Provider) -> (Type, Type, Type) {
    let s = p.get_provider_schema().await.unwrap();
    let object = block_type(s.resource_schemas[OBJECT].block.as_ref().unwrap(), OBJECT).unwrap();
    let lookup = block_type(
        s.data_source_schemas[OBJECT].block.as_ref().unwrap(),
        OBJECT,
    )
    .unwrap();
    let provider = block_type(s.provider.unwrap().block.as_ref().unwrap(), "provider").unwrap();
    (object, lookup, provider)
}

#[tokio::test]
async fn every_rpc_of_a_plan_and_apply_works_over_mutual_tls_in_protocol_6() {
    every_rpc_of_a_plan_and_apply(6).await
}

#[tokio::test]
async fn every_rpc_of_a_plan_and_apply_works_over_mutual_tls_in_protocol_5() {
    every_rpc_of_a_plan_and_apply(5).await
}

async fn every_rpc_of_a_plan_and_apply(version: u32) {
    let store = scratch(&format!("client{version}"));
    let mut launch = Launch::provider(&binary());
    launch
        .env
        .push(("STRATATEST_PROTOCOL".into(), version.to_string()));
    let p = Provider::start(&launch).await.unwrap();
    assert_eq!(p.protocol_version(), version);
    let (ty, lookup_ty, provider_ty) = types(&p).await;
    let Type::Object(o) = &ty else {
        panic!("{ty:?}")
    };
    assert_eq!(
        o.attrs["ports"].element().map(Type::is_primitive),
        Some(false)
    );

    let config =
        value_from_json(&json!({"store": store.display().to_string()}), &provider_ty).unwrap();
    let v = p
        .validate_provider_config(v6::validate_provider_config::Request {
            config: dynamic(&config, &provider_ty),
        })
        .await
        .unwrap();
    assert!(v.diagnostics.is_empty());
    let c = p
        .configure_provider(v6::configure_provider::Request {
            terraform_version: "1.11.4".into(),
            config: dynamic(&config, &provider_ty),
            client_capabilities: None,
        })
        .await
        .unwrap();
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);

    // Validation answers with the attribute's path.
    let bad = value_from_json(
        &json!({"name": "Not OK", "ports": [{"name": "x", "number": 0}]}),
        &ty,
    )
    .unwrap();
    let v = p
        .validate_resource_config(v6::validate_resource_config::Request {
            type_name: OBJECT.into(),
            config: dynamic(&bad, &ty),
            client_capabilities: None,
        })
        .await
        .unwrap();
    assert_eq!(
        errors(&v.diagnostics),
        ["Invalid object name", "Invalid port number"]
    );
    let path = &v.diagnostics[1].attribute.as_ref().unwrap().steps;
    use v6::attribute_path::step::Selector;
    let steps: Vec<_> = path.iter().map(|s| s.selector.clone().unwrap()).collect();
    assert_eq!(
        steps,
        [
            Selector::AttributeName("ports".into()),
            Selector::ElementKeyInt(0),
            Selector::AttributeName("number".into())
        ]
    );

    // Create: computed attributes unknown, defaults filled, private data.
    let config = value_from_json(
        &json!({"name": "alpha", "size": 2, "labels": {"team": "gpu"},
                "spec": {"image": "nginx"}, "ports": [{"name": "http", "number": 80}]}),
        &ty,
    )
    .unwrap();
    let null = Value::Null(ty.clone());
    let planned = p
        .plan_resource_change(v6::plan_resource_change::Request {
            type_name: OBJECT.into(),
            prior_state: dynamic(&null, &ty),
            proposed_new_state: dynamic(&config, &ty),
            config: dynamic(&config, &ty),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(planned.diagnostics.is_empty());
    let private = planned.planned_private.clone();
    assert!(!private.is_empty());
    let planned_value = value(planned.planned_state.clone(), &ty);
    let planned_attrs = planned_value.entries().unwrap();
    assert!(!planned_attrs["id"].is_known());
    assert_eq!(
        planned_attrs["spec"].entries().unwrap()["replicas"]
            .as_number()
            .and_then(|n| n.to_i64()),
        Some(1)
    );

    let applied = p
        .apply_resource_change(v6::apply_resource_change::Request {
            type_name: OBJECT.into(),
            prior_state: dynamic(&null, &ty),
            planned_state: planned.planned_state.clone(),
            config: dynamic(&config, &ty),
            planned_private: private.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(applied.diagnostics.is_empty(), "{:?}", applied.diagnostics);
    assert_eq!(
        applied.private, private,
        "private data comes back as planned"
    );
    let state = value(applied.new_state, &ty);
    assert_eq!(json_of(&state, &ty)["id"], json!("alpha-1"));
    assert!(store.join("alpha-1.json").exists());

    // Drift: the store changed behind the client's back; a read sees it.
    let mut stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(store.join("alpha-1.json")).unwrap())
            .unwrap();
    stored["labels"]["team"] = json!("ml");
    std::fs::write(store.join("alpha-1.json"), stored.to_string()).unwrap();
    let read = p
        .read_resource(v6::read_resource::Request {
            type_name: OBJECT.into(),
            current_state: dynamic(&state, &ty),
            private: private.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(read.private, private);
    let refreshed = value(read.new_state, &ty);
    assert_eq!(json_of(&refreshed, &ty)["labels"], json!({"team": "ml"}));

    // A changed size forces replacement.
    let resized = value_from_json(&json!({"name": "alpha", "size": 3}), &ty).unwrap();
    let plan = p
        .plan_resource_change(v6::plan_resource_change::Request {
            type_name: OBJECT.into(),
            prior_state: dynamic(&refreshed, &ty),
            proposed_new_state: dynamic(&resized, &ty),
            config: dynamic(&resized, &ty),
            prior_private: private.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(plan.requires_replace.len(), 1);

    // Import by id, and the data source by name.
    let imported = p
        .import_resource_state(v6::import_resource_state::Request {
            type_name: OBJECT.into(),
            id: "alpha-1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let got = imported.imported_resources[0].state.clone();
    assert_eq!(json_of(&value(got, &ty), &ty)["name"], json!("alpha"));
    let missing = p
        .import_resource_state(v6::import_resource_state::Request {
            type_name: OBJECT.into(),
            id: "alpha-9".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        errors(&missing.diagnostics),
        ["Cannot import non-existent remote object"]
    );
    let lookup = value_from_json(&json!({"name": "alpha"}), &lookup_ty).unwrap();
    let found = p
        .read_data_source(v6::read_data_source::Request {
            type_name: OBJECT.into(),
            config: dynamic(&lookup, &lookup_ty),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        json_of(&value(found.state, &lookup_ty), &lookup_ty)["id"],
        json!("alpha-1")
    );

    // A version 0 object (labels were `tags`) upgrades.
    let upgraded = p
        .upgrade_resource_state(v6::upgrade_resource_state::Request {
            type_name: OBJECT.into(),
            version: 0,
            raw_state: Some(v6::RawState {
                json: br#"{"id":"alpha-1","name":"alpha","tags":{"a":"b"}}"#.to_vec(),
                flatmap: Default::default(),
            }),
        })
        .await
        .unwrap();
    assert_eq!(
        json_of(&value(upgraded.upgraded_state, &ty), &ty)["labels"],
        json!({"a": "b"})
    );

    // Destroy.
    let destroyed = p
        .apply_resource_change(v6::apply_resource_change::Request {
            type_name: OBJECT.into(),
            prior_state: dynamic(&refreshed, &ty),
            planned_state: dynamic(&null, &ty),
            config: dynamic(&null, &ty),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(value(destroyed.new_state, &ty).is_null());
    assert!(!store.join("alpha-1.json").exists());
    p.stop().await;
}

#[tokio::test]
async fn what_is_not_a_plugin_is_named_so() {
    let echo = Launch::provider(std::path::Path::new("/bin/echo"));
    let err = Provider::start(&echo).await.err().unwrap();
    assert!(matches!(err, LaunchError::Handshake { .. }), "{err}");

    let gone = Launch::provider(std::path::Path::new("/bin/false"));
    let err = Provider::start(&gone).await.err().unwrap();
    assert!(matches!(err, LaunchError::Exited { .. }), "{err}");

    let missing = Launch::provider(std::path::Path::new("/nonexistent/terraform-provider-x"));
    let err = Provider::start(&missing).await.err().unwrap();
    assert!(matches!(err, LaunchError::Spawn { .. }), "{err}");

    // Started by hand, the provider says what go-plugin's providers say.
    let out = std::process::Command::new(binary()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("This binary is a plugin"));
}

#[tokio::test]
async fn a_client_offering_only_version_5_is_told_6() {
    let tmp = scratch("refused");
    let mut launch = Launch::provider(&binary());
    launch.versions = vec![5];
    launch
        .env
        .push(("TMPDIR".into(), tmp.display().to_string()));
    let err = Provider::start(&launch).await.err().unwrap();
    assert!(
        matches!(err, LaunchError::Version { chose: 6, .. }),
        "{err}"
    );
    // The provider given up on leaves no socket behind.
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}
