//! `google_storage_hmac_key`: an access key and secret of a service
//! account for Cloud Storage's XML API, which S3 clients speak (signed as
//! S3 signs, AWS Signature Version 4). The secret is given once, in the
//! create's answer, and kept from then on; a key is deleted only once
//! inactive, so a delete makes it inactive first, as the Terraform
//! provider does. A key carries no labels: one a killed apply made is
//! found by the service account and time its create journalled, and
//! deleted (its secret is lost with the run).

use crate::api::{self, carry, tf};
use crate::schema::project;
use crate::Ctx;
use async_trait::async_trait;
use serde_json::{json, Value as Json};
use strata_provider::{AttributeSchema as A, DriverError, Kind, ResourceSchema, Tags};
use strata_rest::{encode, Method};
use strata_value::types::Type;
use strata_value::value::Value;
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

pub struct HmacKey;

const TYPE: &str = "google_storage_hmac_key";

/// How far Google's clock may be behind this machine's when a crashed
/// create's keys are looked for by their creation time.
const CLOCK_SKEW: Duration = Duration::minutes(5);

impl HmacKey {
    fn keys(c: &Ctx, project: &str) -> String {
        format!(
            "{}projects/{}/hmacKeys",
            c.endpoints.storage,
            encode(project)
        )
    }

    fn url(c: &Ctx, project: &str, access_id: &str) -> String {
        format!("{}/{}", Self::keys(c, project), encode(access_id))
    }

    /// The object for the key's metadata, the secret from `like` (the
    /// create's answer or the state).
    fn value(m: &Json, like: &Json) -> Result<Value, DriverError> {
        let project = m["projectId"].as_str().unwrap_or_default();
        let access = m["accessId"].as_str().unwrap_or_default();
        let mut j = json!({
            "id": format!("projects/{project}/hmacKeys/{access}"),
            "project": project,
            "access_id": access,
            "service_account_email": m["serviceAccountEmail"],
            "state": m["state"],
            "time_created": m["timeCreated"],
            "updated": m["updated"],
        });
        carry(&mut j, like, &["secret"]);
        api::value(&HmacKey.schema(), TYPE, &j)
    }

    async fn metadata(c: &Ctx, project: &str, access: &str) -> Result<Option<Json>, DriverError> {
        let found = c
            .rest
            .get("GET hmacKey", &Self::url(c, project, access))
            .await?;
        // A deleted key is still listed a while, in state DELETED.
        Ok(found.filter(|m| m["state"] != "DELETED"))
    }

    async fn set_state(
        c: &Ctx,
        project: &str,
        access: &str,
        state: &str,
    ) -> Result<Json, DriverError> {
        let url = Self::url(c, project, access);
        let body = json!({ "state": state });
        Ok(c.rest
            .call("update hmacKey", Method::PUT, &url, Some(&body))
            .await?
            .body)
    }
}

#[async_trait]
impl Kind<Ctx> for HmacKey {
    fn schema(&self) -> ResourceSchema {
        let s = Type::String;
        ResourceSchema::of_attributes(vec![
            (
                "service_account_email",
                A::required(s.clone(), "The service account the key signs as.").force_new(),
            ),
            (
                "state",
                A::optional(s.clone(), "ACTIVE (the default) or INACTIVE.").and_computed(),
            ),
            ("project", project()),
            (
                "access_id",
                A::computed(s.clone(), "The key's id: an S3 client's access key."),
            ),
            (
                "secret",
                A::computed(s.clone(), "The key's secret: an S3 client's secret key.").sensitive(),
            ),
            ("time_created", A::computed(s.clone(), "When it was made.")),
            ("updated", A::computed(s.clone(), "When it last changed.")),
            (
                "id",
                A::computed(s, "projects/{project}/hmacKeys/{access_id}."),
            ),
        ])
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let j = tf(o);
            let project = c.project(&j, TYPE)?;
            let access = api::required(&j, TYPE, "access_id")?;
            out.push(match Self::metadata(c, &project, &access).await? {
                Some(m) => Some(Self::value(&m, &j)?),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Ctx, planned: &Value, _tags: &Tags) -> Result<Value, DriverError> {
        let j = tf(planned);
        let project = c.project(&j, TYPE)?;
        let email = api::required(&j, TYPE, "service_account_email")?;
        let url = format!(
            "{}?serviceAccountEmail={}",
            Self::keys(c, &project),
            encode(&email)
        );
        let made = c
            .rest
            .call(&format!("create {TYPE}"), Method::POST, &url, None)
            .await?
            .body;
        let mut m = made["metadata"].clone();
        if j["state"] == "INACTIVE" {
            let access = m["accessId"].as_str().unwrap_or_default().to_string();
            m = Self::set_state(c, &project, &access, "INACTIVE").await?;
        }
        Self::value(&m, &json!({ "secret": made["secret"] }))
    }

    async fn update(&self, c: &Ctx, prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let (old, new) = (tf(prior), tf(planned));
        let project = c.project(&old, TYPE)?;
        let access = api::required(&old, TYPE, "access_id")?;
        let state = new["state"].as_str().unwrap_or("ACTIVE");
        let m = Self::set_state(c, &project, &access, state).await?;
        Self::value(&m, &old)
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let j = tf(prior);
        let project = c.project(&j, TYPE)?;
        let access = api::required(&j, TYPE, "access_id")?;
        let Some(m) = Self::metadata(c, &project, &access).await? else {
            return Ok(());
        };
        if m["state"] != "INACTIVE" {
            Self::set_state(c, &project, &access, "INACTIVE").await?;
        }
        match c
            .rest
            .send(Method::DELETE, &Self::url(c, &project, &access), None)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.status == 404 => Ok(()),
            Err(e) => Err(c.rest.driver_error(&format!("delete {TYPE}"), &e)),
        }
    }

    /// A key carries no labels, and its secret cannot be read again: one
    /// made by a crashed apply is not adopted but found by its trace.
    async fn find_tagged(&self, _c: &Ctx, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }

    /// The key's project (when the configuration names it), service
    /// account and the time before the create was sent.
    fn trace(&self, planned: &Value) -> Option<Json> {
        let j = tf(planned);
        let now = OffsetDateTime::now_utc().format(&Rfc3339).ok()?;
        Some(json!({
            "project": j["project"],
            "service_account_email": j["service_account_email"].as_str()?,
            "not_before": now,
        }))
    }

    /// The live keys of the traced service account made since the trace
    /// was written, less a margin for the two clocks.
    async fn find_traced(&self, c: &Ctx, trace: &Json) -> Result<Vec<Value>, DriverError> {
        let project = c.project(trace, TYPE)?;
        let email = api::required(trace, TYPE, "service_account_email")?;
        let since = api::required(trace, TYPE, "not_before")?;
        let since = OffsetDateTime::parse(&since, &Rfc3339)
            .map_err(|e| api::invalid(TYPE, format!("journal trace time {since:?}: {e}")))?
            - CLOCK_SKEW;
        let url = format!(
            "{}?serviceAccountEmail={}",
            Self::keys(c, &project),
            encode(&email)
        );
        let listed = c.rest.list("list hmacKeys", &url, "items").await?;
        listed
            .iter()
            .filter(|m| m["state"] != "DELETED")
            .filter(|m| {
                m["timeCreated"]
                    .as_str()
                    .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
                    .is_some_and(|t| t >= since)
            })
            .map(|m| Self::value(m, &Json::Null))
            .collect()
    }

    /// Imported as `projects/PROJECT/hmacKeys/ACCESS_ID`, `PROJECT/ACCESS_ID`
    /// or `ACCESS_ID` (the Terraform provider's forms), without its secret.
    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        let parts: Vec<&str> = id.split('/').collect();
        let (project, access) = match parts.as_slice() {
            ["projects", p, "hmacKeys", a] | [p, a] => (p.to_string(), a.to_string()),
            [a] => (c.project(&Json::Null, TYPE)?, a.to_string()),
            _ => {
                return Err(api::invalid(
                    TYPE,
                    format!("import id {id:?} must be projects/PROJECT/hmacKeys/ACCESS_ID"),
                ))
            }
        };
        match Self::metadata(c, &project, &access).await? {
            Some(m) => Ok(Some(Self::value(&m, &Json::Null)?)),
            None => Ok(None),
        }
    }
}
