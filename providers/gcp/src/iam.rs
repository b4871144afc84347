//! Service accounts (IAM API); the members of a policy are in
//! `iam_member.rs`.

use crate::api::{self, carry, tf};
use crate::schema::project;
use crate::Ctx;
use async_trait::async_trait;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::time::Duration;
use strata_provider::wait::{self, Poll};
use strata_provider::{AttributeSchema as A, DriverError, Kind, ResourceSchema, Tags};
use strata_rest::labels::{is_marker, marker};
use strata_rest::Method;
use strata_value::types::Type;
use strata_value::value::Value;

pub struct ServiceAccount;

impl ServiceAccount {
    const TYPE: &'static str = "google_service_account";

    fn email(c: &Ctx, j: &Json) -> Result<(String, String), DriverError> {
        let project = c.project(j, Self::TYPE)?;
        let id = api::required(j, Self::TYPE, "account_id")?;
        Ok((format!("{id}@{project}.iam.gserviceaccount.com"), project))
    }

    fn url(c: &Ctx, project: &str, email: &str) -> String {
        format!(
            "{}projects/{project}/serviceAccounts/{email}",
            c.endpoints.iam
        )
    }

    fn value(sa: &Json, like: Option<&Json>) -> Result<Value, DriverError> {
        let email = sa["email"].as_str().unwrap_or_default();
        let mut j = json!({
            "account_id": email.split('@').next(),
            "project": sa["projectId"],
            "display_name": sa["displayName"],
            "description": sa["description"],
            "email": email,
            "name": sa["name"],
            "unique_id": sa["uniqueId"],
            "member": format!("serviceAccount:{email}"),
            "id": sa["name"],
        });
        if j["description"].as_str().is_some_and(is_marker) {
            j["description"] = Json::Null;
        }
        if let Some(like) = like {
            carry(&mut j, like, &["timeouts"]);
        }
        api::value(&ServiceAccount.schema(), Self::TYPE, &j)
    }

    /// Waits until a new account can be read: IAM is eventually consistent.
    async fn readable(c: &Ctx, url: &str) -> Result<Json, DriverError> {
        let got = wait::until(
            "read new google_service_account",
            Duration::from_secs(120),
            wait::POLL,
            || async {
                Ok(match c.rest.get("GET service account", url).await? {
                    Some(sa) => Poll::Ready(Value::string(sa.to_string())),
                    None => Poll::Pending("not yet visible".into()),
                })
            },
            |p| matches!(p, Poll::Ready(_)),
        )
        .await?;
        match got {
            Poll::Ready(v) => Ok(v
                .as_str()
                .and_then(|s| serde_json::from_str(s).ok())
                .unwrap_or_default()),
            _ => Ok(Json::Null),
        }
    }
}

#[async_trait]
impl Kind<Ctx> for ServiceAccount {
    fn schema(&self) -> ResourceSchema {
        let s = Type::String;
        ResourceSchema::of_attributes(vec![
            (
                "account_id",
                A::required(
                    s.clone(),
                    "The part of the email before @ (6-30 characters).",
                )
                .force_new(),
            ),
            ("display_name", A::optional(s.clone(), "A display name.")),
            ("description", A::optional(s.clone(), "A description.")),
            ("project", project()),
            ("email", A::computed(s.clone(), "The account's email.")),
            (
                "name",
                A::computed(s.clone(), "projects/{project}/serviceAccounts/{email}."),
            ),
            (
                "unique_id",
                A::computed(s.clone(), "The account's numeric id."),
            ),
            (
                "member",
                A::computed(s.clone(), "serviceAccount:{email}, for IAM bindings."),
            ),
            (
                "id",
                A::computed(s, "projects/{project}/serviceAccounts/{email}."),
            ),
        ])
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        // One list per project.
        let mut by_project: BTreeMap<String, BTreeMap<String, Json>> = BTreeMap::new();
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let j = tf(o);
            let (email, project) = Self::email(c, &j)?;
            if !by_project.contains_key(&project) {
                let url = format!("{}projects/{project}/serviceAccounts", c.endpoints.iam);
                let all = c
                    .rest
                    .list("list service accounts", &url, "accounts")
                    .await?;
                let map = all
                    .into_iter()
                    .filter_map(|sa| Some((sa["email"].as_str()?.to_string(), sa)))
                    .collect();
                by_project.insert(project.clone(), map);
            }
            out.push(match by_project[&project].get(&email) {
                Some(sa) => Some(Self::value(sa, Some(&j))?),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Ctx, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        let j = tf(planned);
        let (email, project) = Self::email(c, &j)?;
        let description = j["description"]
            .as_str()
            .map_or_else(|| marker(tags), str::to_string);
        let mut sa = json!({ "description": description });
        if let Some(d) = j["display_name"].as_str() {
            sa["displayName"] = json!(d);
        }
        let body = json!({ "accountId": j["account_id"], "serviceAccount": sa });
        let url = format!("{}projects/{project}/serviceAccounts", c.endpoints.iam);
        match c.rest.send(Method::POST, &url, Some(&body)).await {
            Ok(_) => {}
            Err(e) if e.status == 409 => {
                // Ours when it carries our mark: made by a crashed run, or
                // by this call's first attempt whose answer was lost (then
                // it may not be visible yet: IAM is eventually consistent).
                let existing = Self::readable(c, &Self::url(c, &project, &email)).await?;
                if existing["description"].as_str() != Some(marker(tags).as_str()) {
                    return Err(strata_rest::not_ours(
                        &format!("create {}", Self::TYPE),
                        &format!("service account {email}"),
                        &format!("projects/{project}/serviceAccounts/{email}"),
                    ));
                }
            }
            Err(e) => return Err(c.rest.driver_error(&format!("create {}", Self::TYPE), &e)),
        }
        let sa = Self::readable(c, &Self::url(c, &project, &email)).await?;
        Self::value(&sa, Some(&j))
    }

    async fn update(&self, c: &Ctx, _prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let j = tf(planned);
        let (email, project) = Self::email(c, &j)?;
        let url = Self::url(c, &project, &email);
        let current = c
            .rest
            .get("GET service account", &url)
            .await?
            .unwrap_or_default();
        // An unset description keeps strata's mark.
        let description = match j["description"].as_str() {
            Some(d) => json!(d),
            None => current["description"]
                .clone()
                .as_str()
                .filter(|d| is_marker(d))
                .map_or(Json::Null, |d| json!(d)),
        };
        let body = json!({
            "serviceAccount": {"displayName": j["display_name"], "description": description},
            "updateMask": "displayName,description",
        });
        let sa = c
            .rest
            .call(
                &format!("update {}", Self::TYPE),
                Method::PATCH,
                &url,
                Some(&body),
            )
            .await?
            .body;
        Self::value(&sa, Some(&j))
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let j = tf(prior);
        let (email, project) = Self::email(c, &j)?;
        match c
            .rest
            .send(Method::DELETE, &Self::url(c, &project, &email), None)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.status == 404 => Ok(()),
            Err(e) => Err(c.rest.driver_error(&format!("delete {}", Self::TYPE), &e)),
        }
    }

    async fn find_tagged(&self, c: &Ctx, tags: &Tags) -> Result<Vec<Value>, DriverError> {
        let Ok(project) = c.project(&Json::Null, Self::TYPE) else {
            return Ok(Vec::new());
        };
        let url = format!("{}projects/{project}/serviceAccounts", c.endpoints.iam);
        let mark = marker(tags);
        c.rest
            .list("list service accounts", &url, "accounts")
            .await?
            .iter()
            .filter(|sa| sa["description"].as_str() == Some(mark.as_str()))
            .map(|sa| Self::value(sa, None))
            .collect()
    }

    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        let path = if id.starts_with("projects/") {
            id.to_string()
        } else {
            let project = c.project(&Json::Null, Self::TYPE)?;
            format!("projects/{project}/serviceAccounts/{id}")
        };
        match c
            .rest
            .get("GET service account", &format!("{}{path}", c.endpoints.iam))
            .await?
        {
            Some(sa) => Ok(Some(Self::value(&sa, None)?)),
            None => Ok(None),
        }
    }
}
