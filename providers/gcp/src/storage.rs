//! Cloud Storage buckets (the JSON API; no operations, answers are final),
//! their lifecycle rules (`lifecycle.rs`) and HMAC keys (`hmac.rs`).

mod hmac;
mod lifecycle;
pub use hmac::HmacKey;

use crate::api::{self, carry, owned, ownership_of, tf, user_labels, with_ownership};
use crate::schema::project;
use crate::Ctx;
use async_trait::async_trait;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use strata_provider::values::list_block_max1;
use strata_provider::{
    AttributeSchema as A, DriverError, Kind, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_rest::fields::{f, from_api, object, out, to_api, Field};
use strata_rest::{encode, Method};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct Bucket;

const BUCKET: &[Field] = &[
    f("name", "name"),
    f("location", "location"),
    f("storage_class", "storageClass"),
    f("labels", "labels"),
    object("versioning", "versioning", &[f("enabled", "enabled")]),
    f(
        "uniform_bucket_level_access",
        "iamConfiguration.uniformBucketLevelAccess.enabled",
    ),
    f(
        "public_access_prevention",
        "iamConfiguration.publicAccessPrevention",
    ),
    out("self_link", "selfLink"),
];

/// What a PATCH may change.
const PATCHABLE: &[&str] = &[
    "storage_class",
    "labels",
    "versioning",
    "uniform_bucket_level_access",
    "public_access_prevention",
];

impl Bucket {
    const TYPE: &'static str = "google_storage_bucket";

    fn url(c: &Ctx, name: &str) -> String {
        format!("{}b/{}", c.endpoints.storage, encode(name))
    }

    fn value(b: &Json, project: &Json, like: Option<&Json>) -> Result<Value, DriverError> {
        let mut j = from_api(BUCKET, b);
        let name = b["name"].as_str().unwrap_or_default();
        j["labels"] = user_labels(&b["labels"]);
        j["project"] = project.clone();
        j["id"] = json!(name);
        j["url"] = json!(format!("gs://{name}"));
        j["lifecycle_rule"] = lifecycle::from_api(&b["lifecycle"]);
        if let Some(like) = like {
            carry(&mut j, like, &["force_destroy", "timeouts"]);
        }
        api::value(&Bucket.schema(), Self::TYPE, &j)
    }
}

#[async_trait]
impl Kind<Ctx> for Bucket {
    fn schema(&self) -> ResourceSchema {
        let s = Type::String;
        let mut schema = ResourceSchema::of_attributes(vec![
            (
                "name",
                A::required(s.clone(), "The bucket's globally unique name.").force_new(),
            ),
            (
                "location",
                A::required(
                    s.clone(),
                    "A region, dual-region or multi-region (kept upper-case).",
                )
                .force_new(),
            ),
            ("project", project()),
            (
                "force_destroy",
                A::optional(
                    Type::Bool,
                    "Delete the bucket's objects when destroying it.",
                ),
            ),
            (
                "storage_class",
                A::optional(s.clone(), "STANDARD, NEARLINE, COLDLINE or ARCHIVE.").and_computed(),
            ),
            ("labels", A::optional(Type::map(s.clone()), "Labels.")),
            (
                "uniform_bucket_level_access",
                A::optional(Type::Bool, "IAM alone controls access.").and_computed(),
            ),
            (
                "public_access_prevention",
                A::optional(s.clone(), "enforced or inherited.").and_computed(),
            ),
            ("url", A::computed(s.clone(), "gs://{name}.")),
            ("self_link", A::computed(s.clone(), "The bucket's URL.")),
            ("id", A::computed(s, "The bucket's name.")),
        ]);
        schema.blocks.insert(
            "versioning".into(),
            list_block_max1(vec![(
                "enabled",
                A::required(Type::Bool, "Keep old versions of objects."),
            )]),
        );
        schema
            .blocks
            .insert("lifecycle_rule".into(), lifecycle::rule_block());
        schema
    }

    /// Locations compare without regard to case: GCP answers upper-case.
    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = strata_provider::plan_by_schema(schema, req.prior, req.config);
        if let (Some(prior), Some(want)) = (
            req.prior,
            strata_provider::values::string(req.config, "location"),
        ) {
            if let Some(had) = strata_provider::values::string(prior, "location") {
                if had.eq_ignore_ascii_case(&want) {
                    p.planned = replace_attr(p.planned, "location", Value::string(had));
                }
            }
        }
        p
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        // One list per project, not one GET per bucket.
        let mut by_project: BTreeMap<String, BTreeMap<String, Json>> = BTreeMap::new();
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let j = tf(o);
            let project = c.project(&j, Self::TYPE)?;
            let name = api::required(&j, Self::TYPE, "name")?;
            if !by_project.contains_key(&project) {
                let url = format!("{}b?project={}", c.endpoints.storage, encode(&project));
                let all = c.rest.list("list buckets", &url, "items").await?;
                let map = all
                    .into_iter()
                    .filter_map(|b| Some((b["name"].as_str()?.to_string(), b)))
                    .collect();
                by_project.insert(project.clone(), map);
            }
            out.push(match by_project[&project].get(&name) {
                Some(b) => Some(Self::value(b, &json!(project), Some(&j))?),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Ctx, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        let j = tf(planned);
        let project = c.project(&j, Self::TYPE)?;
        let name = api::required(&j, Self::TYPE, "name")?;
        let mut body = to_api(BUCKET, &j);
        body["labels"] = with_ownership(&j["labels"], tags);
        if j["lifecycle_rule"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
        {
            body["lifecycle"] = lifecycle::to_api(&j["lifecycle_rule"]);
        }
        let url = format!("{}b?project={}", c.endpoints.storage, encode(&project));
        let b = match c.rest.send(Method::POST, &url, Some(&body)).await {
            Ok(r) => r.body,
            Err(e) if e.status == 409 => {
                match c.rest.get("GET bucket", &Self::url(c, &name)).await? {
                    Some(b) if owned(&b["labels"], tags) => b,
                    _ => {
                        return Err(strata_rest::not_ours(
                            &format!("create {}", Self::TYPE),
                            &format!("bucket {name} ({})", e.message),
                            &name,
                        ))
                    }
                }
            }
            Err(e) => return Err(c.rest.driver_error(&format!("create {}", Self::TYPE), &e)),
        };
        Self::value(&b, &json!(project), Some(&j))
    }

    async fn update(&self, c: &Ctx, prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let (old, new) = (tf(prior), tf(planned));
        let project = c.project(&new, Self::TYPE)?;
        let name = api::required(&new, Self::TYPE, "name")?;
        let url = Self::url(c, &name);
        let changed: serde_json::Map<String, Json> = PATCHABLE
            .iter()
            .filter(|k| old[**k] != new[**k])
            .map(|k| (k.to_string(), new[*k].clone()))
            .collect();
        let rules_changed = old["lifecycle_rule"] != new["lifecycle_rule"];
        let b = if changed.is_empty() && !rules_changed {
            c.rest.get("GET bucket", &url).await?.unwrap_or_default()
        } else {
            let mut body = to_api(BUCKET, &Json::Object(changed.clone()));
            if changed.contains_key("labels") {
                // Labels are replaced whole: strata's own are kept, the
                // user's removed ones are cleared (null in a patch).
                let current = c.rest.get("GET bucket", &url).await?.unwrap_or_default();
                let mut labels = ownership_of(&current["labels"]);
                if let (Some(m), Some(user)) = (labels.as_object_mut(), new["labels"].as_object()) {
                    m.extend(user.clone());
                }
                for k in current["labels"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k)
                {
                    if labels.get(k).is_none() {
                        labels[k] = Json::Null;
                    }
                }
                body["labels"] = labels;
            }
            if changed.get("versioning").is_some_and(Json::is_null) {
                body["versioning"] = json!({"enabled": false});
            }
            if rules_changed {
                body["lifecycle"] = lifecycle::to_api(&new["lifecycle_rule"]);
            }
            c.rest
                .call(
                    &format!("update {}", Self::TYPE),
                    Method::PATCH,
                    &url,
                    Some(&body),
                )
                .await?
                .body
        };
        Self::value(&b, &json!(project), Some(&new))
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let j = tf(prior);
        let name = api::required(&j, Self::TYPE, "name")?;
        let url = Self::url(c, &name);
        if j["force_destroy"] == true {
            // Every generation, not only the live ones: a versioned
            // bucket keeps the rest, and is not empty while it does.
            let all = format!("{url}/o?versions=true");
            let objects = match c.rest.send(Method::GET, &all, None).await {
                Ok(_) => c.rest.list("list objects", &all, "items").await?,
                Err(e) if e.status == 404 => return Ok(()),
                Err(e) => return Err(c.rest.driver_error("list objects", &e)),
            };
            for o in objects {
                let name = encode(o["name"].as_str().unwrap_or_default());
                let obj = match o["generation"].as_str() {
                    Some(g) => format!("{url}/o/{name}?generation={g}"),
                    None => format!("{url}/o/{name}"),
                };
                match c.rest.send(Method::DELETE, &obj, None).await {
                    Ok(_) => {}
                    Err(e) if e.status == 404 => {}
                    Err(e) => return Err(c.rest.driver_error("delete object", &e)),
                }
            }
        }
        match c.rest.send(Method::DELETE, &url, None).await {
            Ok(_) => Ok(()),
            Err(e) if e.status == 404 => Ok(()),
            Err(e) if e.status == 409 => Err(DriverError::Api {
                operation: format!("delete {}", Self::TYPE),
                detail: format!("{}: bucket {name} still holds objects; set force_destroy = true (and apply) to delete them with it", e.message),
                retryable: false,
            }),
            Err(e) => Err(c.rest.driver_error(&format!("delete {}", Self::TYPE), &e)),
        }
    }

    async fn find_tagged(&self, c: &Ctx, tags: &Tags) -> Result<Vec<Value>, DriverError> {
        let Ok(project) = c.project(&Json::Null, Self::TYPE) else {
            return Ok(Vec::new());
        };
        let url = format!("{}b?project={}", c.endpoints.storage, encode(&project));
        c.rest
            .list("list buckets", &url, "items")
            .await?
            .iter()
            .filter(|b| owned(&b["labels"], tags))
            .map(|b| Self::value(b, &json!(project), None))
            .collect()
    }

    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        let project = c.project(&Json::Null, Self::TYPE).ok();
        match c.rest.get("GET bucket", &Self::url(c, id)).await? {
            Some(b) => Ok(Some(Self::value(&b, &json!(project), None)?)),
            None => Ok(None),
        }
    }
}

/// `v` with one attribute replaced.
fn replace_attr(v: Value, name: &str, with: Value) -> Value {
    match v {
        Value::Object(mut m) => {
            m.insert(name.to_string(), with);
            Value::Object(m)
        }
        other => other,
    }
}
