//! The builtin terraform_data driver follows Terraform's plan rules.

use strata::builtin::terraform_data::{TerraformData, TYPE};
use strata::lang::types::Type;
use strata::lang::value::{Attrs, Value};
use strata_provider::{Driver, DriverError, PlanRequest, Tags};

fn config(input: Value, triggers: Value) -> Value {
    Value::Object(Attrs::from([
        ("id".to_string(), Value::null()),
        ("input".to_string(), input),
        ("output".to_string(), Value::null()),
        ("triggers_replace".to_string(), triggers),
    ]))
}

fn get(v: &Value, k: &str) -> Value {
    v.entries().expect("object")[k].clone()
}

fn tags() -> Tags {
    Tags {
        address: "terraform_data.x".into(),
        lineage: "l".into(),
    }
}

#[tokio::test]
async fn create_then_no_change_then_update_then_replace() {
    let d = TerraformData::default();
    let cfg = config(Value::string("a"), Value::null());
    let plan = d
        .plan(PlanRequest {
            type_name: TYPE,
            prior: None,
            config: &cfg,
            prior_kept: &Default::default(),
        })
        .expect("plan");
    assert!(
        get(&plan.planned, "id").raw_equal(&Value::Unknown(Type::String)),
        "id known only after apply"
    );
    assert!(
        !get(&plan.planned, "output").is_known(),
        "output unknown while input is new"
    );
    let created = d
        .create(TYPE, &plan.planned, &tags())
        .await
        .expect("create");
    let id = get(&created, "id");
    let id = id.as_str().expect("id");
    assert_eq!((id.len(), id.matches('-').count()), (36, 4), "a UUID: {id}");
    assert_eq!(
        get(&created, "output").as_str(),
        Some("a"),
        "output echoes input"
    );

    // Same input: nothing unknown, id kept.
    let same = d
        .plan(PlanRequest {
            type_name: TYPE,
            prior: Some(&created),
            config: &cfg,
            prior_kept: &Default::default(),
        })
        .expect("plan");
    assert!(
        same.planned.raw_equal(&created),
        "no change plans the prior object"
    );
    assert!(same.requires_replace.is_empty());

    // New input: updated in place, output unknown until apply.
    let cfg2 = config(Value::string("b"), Value::null());
    let upd = d
        .plan(PlanRequest {
            type_name: TYPE,
            prior: Some(&created),
            config: &cfg2,
            prior_kept: &Default::default(),
        })
        .expect("plan");
    assert!(upd.requires_replace.is_empty());
    assert_eq!(get(&upd.planned, "id").as_str(), Some(id));
    assert!(get(&upd.planned, "output").raw_equal(&Value::Unknown(Type::String)));
    let updated = d
        .update(TYPE, &created, &upd.planned)
        .await
        .expect("update");
    assert_eq!(get(&updated, "output").as_str(), Some("b"));
    assert_eq!(
        get(&updated, "id").as_str(),
        Some(id),
        "update keeps the id"
    );

    // New triggers_replace: replaced.
    let cfg3 = config(Value::string("b"), Value::int(1));
    let rep = d
        .plan(PlanRequest {
            type_name: TYPE,
            prior: Some(&updated),
            config: &cfg3,
            prior_kept: &Default::default(),
        })
        .expect("plan");
    assert_eq!(
        rep.requires_replace,
        vec![vec!["triggers_replace".to_string()]]
    );
    assert!(get(&rep.planned, "id").raw_equal(&Value::Unknown(Type::String)));
}

#[tokio::test]
async fn null_input_gives_null_output_and_unknown_types_are_refused() {
    let d = TerraformData::default();
    let cfg = config(Value::null(), Value::null());
    let plan = d
        .plan(PlanRequest {
            type_name: TYPE,
            prior: None,
            config: &cfg,
            prior_kept: &Default::default(),
        })
        .expect("plan");
    assert!(
        get(&plan.planned, "output").is_null(),
        "output's type follows the null input"
    );
    assert!(matches!(
        d.plan(PlanRequest {
            type_name: "aws_vpc",
            prior: None,
            config: &cfg,
            prior_kept: &Default::default(),
        }),
        Err(DriverError::UnknownType { .. })
    ));
    let read = d
        .read(TYPE, std::slice::from_ref(&cfg))
        .await
        .expect("read");
    assert!(
        read[0].as_ref().is_some_and(|v| v.raw_equal(&cfg)),
        "state is the truth for terraform_data"
    );
}
