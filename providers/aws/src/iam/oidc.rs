//! `aws_iam_openid_connect_provider`: trusts a cluster's OIDC issuer, so
//! pods take IAM roles (IRSA) — how the GPU Operator's and other add-ons'
//! service accounts reach AWS.

use super::{iam_tags, owned, retag, tag_values};
use crate::error::{api, deleted, is_not_found};
use crate::tags::{self, with_ownership};
use crate::values::{each, object, required, string, string_list, string_map, string_set, strings};
use crate::{Clients, Kind};
use async_trait::async_trait;
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct OpenIdConnectProvider;

/// IAM keeps the issuer without its scheme; so does the plan, or every
/// apply would look like a change.
fn without_scheme(url: &str) -> &str {
    url.strip_prefix("https://").unwrap_or(url)
}

impl OpenIdConnectProvider {
    const TYPE: &'static str = "aws_iam_openid_connect_provider";

    async fn get(&self, c: &Clients, arn: &str) -> Result<Option<Value>, DriverError> {
        let out = match c
            .iam
            .get_open_id_connect_provider()
            .open_id_connect_provider_arn(arn)
            .send()
            .await
        {
            Ok(out) => out,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(api("GetOpenIDConnectProvider", e)),
        };
        Ok(Some(Self::value(arn, &out)))
    }

    fn value(
        arn: &str,
        out: &aws_sdk_iam::operation::get_open_id_connect_provider::GetOpenIdConnectProviderOutput,
    ) -> Value {
        let (tags, all) = tag_values(out.tags());
        object(vec![
            ("id", Value::string(arn)),
            ("arn", Value::string(arn)),
            (
                "url",
                Value::string(without_scheme(out.url().unwrap_or_default())),
            ),
            ("client_id_list", string_set(out.client_id_list())),
            ("thumbprint_list", string_list(out.thumbprint_list())),
            ("tags", tags),
            ("tags_all", all),
        ])
    }

    async fn reread(&self, c: &Clients, arn: &str) -> Result<Value, DriverError> {
        self.get(c, arn).await?.ok_or_else(|| DriverError::Api {
            operation: format!("GetOpenIDConnectProvider {arn}"),
            detail: "the provider is not there right after being written".into(),
            retryable: true,
        })
    }
}

#[async_trait]
impl Kind<Clients> for OpenIdConnectProvider {
    fn schema(&self) -> ResourceSchema {
        tags::taggable_schema(vec![
            (
                "url",
                A::required(Type::String, "The issuer (the token's iss claim).").force_new(),
            ),
            (
                "client_id_list",
                A::required(Type::set(Type::String), "Audiences (sts.amazonaws.com)."),
            ),
            (
                "thumbprint_list",
                A::optional(
                    Type::list(Type::String),
                    "Server certificate thumbprints (AWS finds them when left out).",
                )
                .and_computed(),
            ),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = tags::plan_taggable(schema, req, &[]);
        if let Value::Object(m) = &mut p.planned {
            if let Some(url) = m.get("url").and_then(Value::as_str) {
                let bare = without_scheme(url).to_string();
                m.insert("url".into(), Value::string(bare));
            }
        }
        p
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        each(
            objs,
            |o| string(o, "arn"),
            |a| async move { self.get(c, &a).await },
        )
        .await
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        let url = required(planned, Self::TYPE, "url")?;
        let thumbprints = strings(planned, "thumbprint_list");
        let out = c
            .iam
            .create_open_id_connect_provider()
            .url(format!("https://{}", without_scheme(&url)))
            .set_client_id_list(Some(strings(planned, "client_id_list")))
            .set_thumbprint_list((!thumbprints.is_empty()).then_some(thumbprints))
            .set_tags(Some(iam_tags(&with_ownership(
                &string_map(planned, "tags"),
                t,
            ))))
            .send()
            .await
            .map_err(|e| api("CreateOpenIDConnectProvider", e))?;
        let arn = out
            .open_id_connect_provider_arn()
            .ok_or_else(|| DriverError::Api {
                operation: "CreateOpenIDConnectProvider".into(),
                detail: "the response carries no ARN".into(),
                retryable: false,
            })?
            .to_string();
        self.reread(c, &arn).await
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let arn = required(prior, Self::TYPE, "arn")?;
        let (had, want) = (
            strings(prior, "client_id_list"),
            strings(planned, "client_id_list"),
        );
        for id in want.iter().filter(|w| !had.contains(w)) {
            c.iam
                .add_client_id_to_open_id_connect_provider()
                .open_id_connect_provider_arn(&arn)
                .client_id(id)
                .send()
                .await
                .map_err(|e| api("AddClientIDToOpenIDConnectProvider", e))?;
        }
        for id in had.iter().filter(|h| !want.contains(h)) {
            deleted(
                "RemoveClientIDFromOpenIDConnectProvider",
                c.iam
                    .remove_client_id_from_open_id_connect_provider()
                    .open_id_connect_provider_arn(&arn)
                    .client_id(id)
                    .send()
                    .await,
            )?;
        }
        let thumbprints = strings(planned, "thumbprint_list");
        if thumbprints != strings(prior, "thumbprint_list") && !thumbprints.is_empty() {
            c.iam
                .update_open_id_connect_provider_thumbprint()
                .open_id_connect_provider_arn(&arn)
                .set_thumbprint_list(Some(thumbprints))
                .send()
                .await
                .map_err(|e| api("UpdateOpenIDConnectProviderThumbprint", e))?;
        }
        retag(
            prior,
            planned,
            |keys| {
                c.iam
                    .untag_open_id_connect_provider()
                    .open_id_connect_provider_arn(&arn)
                    .set_tag_keys(Some(keys))
                    .send()
            },
            |set| {
                c.iam
                    .tag_open_id_connect_provider()
                    .open_id_connect_provider_arn(&arn)
                    .set_tags(Some(set))
                    .send()
            },
        )
        .await?;
        self.reread(c, &arn).await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let arn = required(prior, Self::TYPE, "arn")?;
        deleted(
            "DeleteOpenIDConnectProvider",
            c.iam
                .delete_open_id_connect_provider()
                .open_id_connect_provider_arn(&arn)
                .send()
                .await,
        )
        .map(|_| ())
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        let list = c
            .iam
            .list_open_id_connect_providers()
            .send()
            .await
            .map_err(|e| api("ListOpenIDConnectProviders", e))?;
        let mut found = Vec::new();
        for p in list.open_id_connect_provider_list() {
            let Some(arn) = p.arn() else { continue };
            let out = c
                .iam
                .get_open_id_connect_provider()
                .open_id_connect_provider_arn(arn)
                .send()
                .await
                .map_err(|e| api("GetOpenIDConnectProvider", e))?;
            if owned(out.tags(), t) {
                found.push(Self::value(arn, &out));
            }
        }
        Ok(found)
    }

    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        self.get(c, id).await
    }
}
