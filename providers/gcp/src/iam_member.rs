//! One member of one role in a resource's IAM policy: a project's
//! (`google_project_iam_member`, Resource Manager) or a bucket's
//! (`google_storage_bucket_iam_member`, Cloud Storage). The policy is
//! read, changed and written back with its etag; writes to one policy are
//! made one at a time here, and a write that lost a race (`ABORTED`, or
//! Cloud Storage's 412) or names an account IAM cannot see yet is tried
//! again from a fresh read.

use crate::api::{self, tf};
use crate::Ctx;
use async_trait::async_trait;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use strata_provider::{AttributeSchema as A, DriverError, Kind, ResourceSchema, Tags};
use strata_rest::{encode, Method};
use strata_value::types::Type;
use strata_value::value::Value;

/// What holds a policy, and how its API reads and writes it.
pub trait Holder: Send + Sync + 'static {
    const TYPE: &'static str;
    /// The attribute that names the holder (`project`, `bucket`).
    const ATTR: &'static str;
    const DOC: &'static str;
    /// The holder's part of an import id (`PROJECT`, `b/BUCKET`).
    fn from_import(part: &str) -> &str;
    /// The id Terraform gives the member.
    fn id(holder: &str, role: &str, member: &str) -> String;
    /// The read: method, URL and body.
    fn get(c: &Ctx, holder: &str) -> (Method, String, Option<Json>);
    /// The write of `policy`: method, URL and body.
    fn set(c: &Ctx, holder: &str, policy: Json) -> (Method, String, Json);
}

pub struct Project;

impl Holder for Project {
    const TYPE: &'static str = "google_project_iam_member";
    const ATTR: &'static str = "project";
    const DOC: &'static str = "The project.";

    fn from_import(part: &str) -> &str {
        part
    }

    fn id(project: &str, role: &str, member: &str) -> String {
        format!("{project}/{role}/{member}")
    }

    fn get(c: &Ctx, project: &str) -> (Method, String, Option<Json>) {
        let url = format!(
            "{}projects/{project}:getIamPolicy",
            c.endpoints.resource_manager
        );
        let body = json!({"options": {"requestedPolicyVersion": 1}});
        (Method::POST, url, Some(body))
    }

    fn set(c: &Ctx, project: &str, policy: Json) -> (Method, String, Json) {
        let url = format!(
            "{}projects/{project}:setIamPolicy",
            c.endpoints.resource_manager
        );
        (Method::POST, url, json!({ "policy": policy }))
    }
}

pub struct Bucket;

impl Bucket {
    fn url(c: &Ctx, bucket: &str) -> String {
        format!("{}b/{}/iam", c.endpoints.storage, encode(bucket))
    }
}

impl Holder for Bucket {
    const TYPE: &'static str = "google_storage_bucket_iam_member";
    const ATTR: &'static str = "bucket";
    const DOC: &'static str = "The bucket.";

    fn from_import(part: &str) -> &str {
        part.strip_prefix("b/").unwrap_or(part)
    }

    fn id(bucket: &str, role: &str, member: &str) -> String {
        format!("b/{bucket}/{role}/{member}")
    }

    fn get(c: &Ctx, bucket: &str) -> (Method, String, Option<Json>) {
        (Method::GET, Self::url(c, bucket), None)
    }

    fn set(c: &Ctx, bucket: &str, policy: Json) -> (Method, String, Json) {
        (Method::PUT, Self::url(c, bucket), policy)
    }
}

/// A member of a role in `H`'s policy.
pub struct IamMember<H>(std::marker::PhantomData<H>);

impl<H> IamMember<H> {
    pub const fn new() -> Self {
        IamMember(std::marker::PhantomData)
    }
}

impl<H: Holder> IamMember<H> {
    fn parts(j: &Json) -> Result<(String, String, String), DriverError> {
        Ok((
            api::required(j, H::TYPE, H::ATTR)?,
            api::required(j, H::TYPE, "role")?,
            api::required(j, H::TYPE, "member")?,
        ))
    }

    async fn policy(c: &Ctx, holder: &str) -> Result<Json, DriverError> {
        let (method, url, body) = H::get(c, holder);
        Ok(c.rest
            .call("getIamPolicy", method, &url, body.as_ref())
            .await?
            .body)
    }

    fn has(policy: &Json, role: &str, member: &str) -> bool {
        policy["bindings"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|b| {
                b["role"] == role
                    && b["members"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|m| m == member)
            })
    }

    /// The policy's bindings with the member added (`add`) or removed.
    fn changed(policy: &Json, role: &str, member: &str, add: bool) -> Vec<Json> {
        let mut bindings = policy["bindings"].as_array().cloned().unwrap_or_default();
        if add {
            let unconditional = bindings
                .iter_mut()
                .find(|b| b["role"] == role && b.get("condition").is_none());
            match unconditional {
                Some(b) => {
                    if let Some(ms) = b["members"].as_array_mut() {
                        ms.push(json!(member));
                    }
                }
                None => bindings.push(json!({"role": role, "members": [member]})),
            }
        } else {
            for b in bindings.iter_mut().filter(|b| b["role"] == role) {
                if let Some(ms) = b["members"].as_array_mut() {
                    ms.retain(|m| m != member);
                }
            }
            bindings.retain(|b| b["members"].as_array().is_some_and(|m| !m.is_empty()));
        }
        bindings
    }

    /// Adds (`add`) or removes the member, retrying lost races.
    async fn change(
        c: &Ctx,
        holder: &str,
        role: &str,
        member: &str,
        add: bool,
    ) -> Result<Json, DriverError> {
        let lock = c.lock(&format!("iam:{}:{holder}", H::ATTR));
        let _held = lock.lock().await;
        let mut attempt = 0u32;
        loop {
            let mut policy = Self::policy(c, holder).await?;
            if Self::has(&policy, role, member) == add {
                return Ok(policy);
            }
            policy["bindings"] = json!(Self::changed(&policy, role, member, add));
            let (method, url, body) = H::set(c, holder, policy);
            match c.rest.send(method, &url, Some(&body)).await {
                Ok(r) => return Ok(r.body),
                Err(e)
                    if attempt < 8
                        && (e.code == "ABORTED"
                            || e.status == 412
                            || (e.status == 400 && e.message.contains("does not exist"))) =>
                {
                    attempt += 1;
                    let pause = strata_rest::Retry::default().delay(attempt, None);
                    tokio::time::sleep(pause).await;
                }
                Err(e) => return Err(c.rest.driver_error("setIamPolicy", &e)),
            }
        }
    }

    fn value(holder: &str, role: &str, member: &str, policy: &Json) -> Result<Value, DriverError> {
        let mut j = json!({
            "role": role, "member": member,
            "etag": policy["etag"],
            "id": H::id(holder, role, member),
        });
        j[H::ATTR] = json!(holder);
        api::value(&Self::new().schema(), H::TYPE, &j)
    }
}

#[async_trait]
impl<H: Holder> Kind<Ctx> for IamMember<H> {
    fn schema(&self) -> ResourceSchema {
        let s = Type::String;
        ResourceSchema::of_attributes(vec![
            (H::ATTR, A::required(s.clone(), H::DOC).force_new()),
            (
                "role",
                A::required(s.clone(), "The role (roles/container.nodeServiceAccount).")
                    .force_new(),
            ),
            (
                "member",
                A::required(
                    s.clone(),
                    "The member (serviceAccount:EMAIL, user:EMAIL, group:EMAIL).",
                )
                .force_new(),
            ),
            (
                "etag",
                A::computed(s.clone(), "The policy's etag when last read."),
            ),
            ("id", A::computed(s, "The member's id in Terraform's form.")),
        ])
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        // One policy read per holder, however many members.
        let mut policies: BTreeMap<String, Json> = BTreeMap::new();
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let (holder, role, member) = Self::parts(&tf(o))?;
            if !policies.contains_key(&holder) {
                let p = Self::policy(c, &holder).await?;
                policies.insert(holder.clone(), p);
            }
            let policy = &policies[&holder];
            if !Self::has(policy, &role, &member) {
                out.push(None);
                continue;
            }
            // The etag is the whole policy's: any other member's write
            // changes it, which is no change to this member, so the one
            // recorded at its own write is kept.
            let mut seen = policy.clone();
            if let Some(e) = tf(o).get("etag").filter(|e| e.is_string()) {
                seen["etag"] = e.clone();
            }
            out.push(Some(Self::value(&holder, &role, &member, &seen)?));
        }
        Ok(out)
    }

    /// Adding a member that is already there changes nothing, so a crashed
    /// create is simply made again.
    async fn create(&self, c: &Ctx, planned: &Value, _tags: &Tags) -> Result<Value, DriverError> {
        let (holder, role, member) = Self::parts(&tf(planned))?;
        let policy = Self::change(c, &holder, &role, &member, true).await?;
        Self::value(&holder, &role, &member, &policy)
    }

    /// Every attribute forces replacement, so only a refresh of `etag` is
    /// left to do.
    async fn update(&self, c: &Ctx, _prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let (holder, role, member) = Self::parts(&tf(planned))?;
        let policy = Self::policy(c, &holder).await?;
        Self::value(&holder, &role, &member, &policy)
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let (holder, role, member) = Self::parts(&tf(prior))?;
        Self::change(c, &holder, &role, &member, false)
            .await
            .map(|_| ())
    }

    async fn find_tagged(&self, _c: &Ctx, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }

    /// Imported by `HOLDER ROLE MEMBER` (the Terraform provider's form:
    /// `PROJECT …`, `b/BUCKET …`).
    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        let parts: Vec<&str> = id.split_whitespace().collect();
        let [holder, role, member] = parts.as_slice() else {
            return Err(api::invalid(
                H::TYPE,
                format!(
                    "import id {id:?} must be \"{} ROLE MEMBER\"",
                    H::ATTR.to_uppercase()
                ),
            ));
        };
        let holder = H::from_import(holder);
        let policy = Self::policy(c, holder).await?;
        if !Self::has(&policy, role, member) {
            return Ok(None);
        }
        Ok(Some(Self::value(holder, role, member, &policy)?))
    }
}
