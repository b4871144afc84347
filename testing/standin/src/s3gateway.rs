//! The S3 gateway strata runs in an AKS cluster in front of a storage
//! account (s3proxy with its `azureblob-sdk` backend), standing in for the
//! gateway's pods, which no stand-in cluster runs. It answers as a gateway
//! configured by the Deployment strata applied would answer, and only so:
//! its settings are read from that Deployment (and the Secret its
//! environment names) in the Kubernetes stand-in, and what the gateway
//! needs from Azure is checked in the Azure stand-in the way Azure would
//! check it when the real gateway calls Blob storage:
//!
//! - S3 requests signed with SigV4 by the gateway's own key pair
//!   (`S3PROXY_IDENTITY`, `S3PROXY_CREDENTIAL`; `S3PROXY_AUTHORIZATION`
//!   must allow v4), checked as `crate::sigv4` checks them;
//! - the backend's credential: with `JCLOUDS_IDENTITY` and
//!   `JCLOUDS_CREDENTIAL` empty the Azure SDK's default chain, which in a
//!   pod means workload identity: the pod labelled
//!   `azure.workload.identity/use`, its service account annotated with a
//!   managed identity's client id, a federated credential of that
//!   identity for this cluster's OIDC issuer and that service account,
//!   audience `api://AzureADTokenExchange`;
//! - that identity holding Storage Blob Data Contributor on the account
//!   in `JCLOUDS_ENDPOINT` (or a scope above it);
//! - the bucket an existing container of that account.
//!
//! Objects: PUT, GET, HEAD, DELETE, path-style (`/BUCKET/KEY`). Uploads
//! in the `aws-chunked` encoding are refused (the checkpoint Secret sets
//! `AWS_REQUEST_CHECKSUM_CALCULATION=WHEN_REQUIRED`, so jobs send plain
//! bodies); errors in S3's XML form.

use crate::azure::{Blobs, Read};
use crate::kubernetes::Endpoint;
use crate::sigv4::{header, hex, s3_error, Signed};
use crate::{serve, Body, Req, Server};
use base64::Engine;
use hyper::{Method, Response};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Storage Blob Data Contributor's role definition id.
const BLOB_DATA_CONTRIBUTOR: &str = "ba92f5b4-2d11-453d-a403-e96b0029c9fe";
const TOKEN_AUDIENCE: &str = "api://AzureADTokenExchange";

/// A running gateway stand-in.
pub struct Gateway {
    pub server: Server,
}

/// Starts the gateway of every AKS cluster `aks` serves, its storage in
/// the Azure stand-in's `blobs`, on a free port (plain HTTP, as the
/// gateway's Service is reached inside the cluster).
pub fn start(blobs: Blobs, aks: Endpoint) -> std::io::Result<Gateway> {
    let server = serve(move |req| {
        let (blobs, aks) = (blobs.clone(), aks.clone());
        async move { answer(&blobs, &aks, &req) }
    })?;
    Ok(Gateway { server })
}

/// One gateway as its Deployment configures it.
struct Deployed {
    cluster: String,
    namespace: String,
    env: BTreeMap<String, String>,
    service_account: String,
    uses_workload_identity: bool,
}

fn answer(blobs: &Blobs, aks: &Endpoint, req: &Req) -> Response<Body> {
    if header(req, "content-encoding").is_some_and(|v| v.contains("aws-chunked"))
        || header(req, "x-amz-content-sha256").is_some_and(|v| v.starts_with("STREAMING-"))
    {
        return s3_error(501, "NotImplemented", "aws-chunked uploads are not taken here; send the body whole (AWS_REQUEST_CHECKSUM_CALCULATION=WHEN_REQUIRED).");
    }
    let Some(signed) = Signed::of(req) else {
        return s3_error(
            403,
            "AccessDenied",
            "A request signed with AWS Signature Version 4 is required.",
        );
    };
    let deployments = deployed(aks);
    let Some(gw) = deployments
        .iter()
        .find(|d| d.env.get("S3PROXY_IDENTITY") == Some(&signed.access))
    else {
        return s3_error(
            403,
            "InvalidAccessKeyId",
            "The AWS Access Key Id you provided does not exist in our records.",
        );
    };
    let authorization = gw.env.get("S3PROXY_AUTHORIZATION").map(String::as_str);
    if !matches!(authorization, Some("aws-v4" | "aws-v2-or-v4")) {
        return s3_error(403, "AccessDenied", &format!("the gateway's S3PROXY_AUTHORIZATION is {authorization:?}, which does not take SigV4"));
    }
    let secret = gw
        .env
        .get("S3PROXY_CREDENTIAL")
        .cloned()
        .unwrap_or_default();
    if !signed.matches(req, &secret) {
        return s3_error(
            403,
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided.",
        );
    }
    if !crate::sigv4::payload_matches(req) {
        return s3_error(
            400,
            "XAmzContentSHA256Mismatch",
            "The provided 'x-amz-content-sha256' header does not match what was computed.",
        );
    }
    let resources = blobs.resources();
    let account = match backend(gw, aks, &resources) {
        Ok(a) => a,
        Err(why) => return s3_error(403, "AccessDenied", &why),
    };
    let path = req.path.trim_start_matches('/');
    let (bucket, key) = path.split_once('/').unwrap_or((path, ""));
    let container = format!("{account}/blobServices/default/containers/{bucket}");
    object(blobs, req, &container, &crate::decode(key))
}

/// Every s3proxy Deployment with the Azure SDK backend, in every cluster,
/// its environment resolved (values from Secrets read).
fn deployed(aks: &Endpoint) -> Vec<Deployed> {
    let secrets = aks.objects("secrets");
    aks.objects("deployments")
        .into_iter()
        .filter_map(|(cluster, d)| {
            let pod = &d["spec"]["template"];
            let namespace = d["metadata"]["namespace"].as_str()?.to_string();
            let container = pod["spec"]["containers"].as_array()?.first()?;
            let env: BTreeMap<String, String> = container["env"]
                .as_array()?
                .iter()
                .filter_map(|e| {
                    let value = match e["valueFrom"]["secretKeyRef"].as_object() {
                        Some(r) => secret_value(&secrets, &cluster, &namespace, r)?,
                        None => e["value"].as_str().unwrap_or_default().to_string(),
                    };
                    Some((e["name"].as_str()?.to_string(), value))
                })
                .collect();
            (env.get("JCLOUDS_PROVIDER").map(String::as_str) == Some("azureblob-sdk")).then(|| {
                Deployed {
                    uses_workload_identity: pod["metadata"]["labels"]
                        ["azure.workload.identity/use"]
                        == "true",
                    service_account: pod["spec"]["serviceAccountName"]
                        .as_str()
                        .unwrap_or("default")
                        .to_string(),
                    cluster,
                    namespace,
                    env,
                }
            })
        })
        .collect()
}

fn secret_value(
    secrets: &[(String, Json)],
    cluster: &str,
    namespace: &str,
    r: &serde_json::Map<String, Json>,
) -> Option<String> {
    let (name, key) = (r.get("name")?.as_str()?, r.get("key")?.as_str()?);
    let (_, s) = secrets.iter().find(|(c, s)| {
        c == cluster && s["metadata"]["namespace"] == namespace && s["metadata"]["name"] == name
    })?;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(s["data"][key].as_str()?)
        .ok()?;
    String::from_utf8(raw).ok()
}

/// The storage account's id the gateway reaches, once every link of its
/// credential chain holds; else which link is missing.
fn backend(gw: &Deployed, aks: &Endpoint, resources: &[Json]) -> Result<String, String> {
    let env = |k: &str| gw.env.get(k).map(String::as_str).unwrap_or_default();
    if !env("JCLOUDS_IDENTITY").is_empty() || !env("JCLOUDS_CREDENTIAL").is_empty() {
        return Err("the gateway is given a storage key; strata's uses workload identity (JCLOUDS_IDENTITY and JCLOUDS_CREDENTIAL empty)".into());
    }
    if !gw.uses_workload_identity {
        return Err("DefaultAzureCredential found no credential: the gateway's pods lack the label azure.workload.identity/use=true".into());
    }
    let sa_path = format!(
        "/api/v1/namespaces/{}/serviceaccounts/{}",
        gw.namespace, gw.service_account
    );
    let client_id = aks
        .objects("serviceaccounts")
        .into_iter()
        .find(|(c, s)| {
            *c == gw.cluster
                && s["metadata"]["namespace"] == gw.namespace.as_str()
                && s["metadata"]["name"] == gw.service_account.as_str()
        })
        .and_then(|(_, s)| {
            s["metadata"]["annotations"]["azure.workload.identity/client-id"]
                .as_str()
                .map(str::to_string)
        })
        .ok_or_else(|| format!("{sa_path} is not annotated azure.workload.identity/client-id"))?;
    let of_type = |t: &'static str| {
        resources.iter().filter(move |r| {
            r["type"]
                .as_str()
                .is_some_and(|x| x.eq_ignore_ascii_case(t))
        })
    };
    let identity = of_type("Microsoft.ManagedIdentity/userAssignedIdentities")
        .find(|i| i["properties"]["clientId"] == client_id.as_str())
        .ok_or_else(|| format!("AADSTS700016: no managed identity has client id {client_id}"))?;
    let identity_id = identity["id"]
        .as_str()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let issuer = of_type("Microsoft.ContainerService/managedClusters")
        .find(|c| c["name"] == gw.cluster.as_str())
        .and_then(|c| c["properties"]["oidcIssuerProfile"]["issuerURL"].as_str())
        .ok_or_else(|| {
            format!(
                "cluster {} publishes no OIDC issuer (oidc_issuer_enabled)",
                gw.cluster
            )
        })?;
    let subject = format!(
        "system:serviceaccount:{}:{}",
        gw.namespace, gw.service_account
    );
    let federated =
        of_type("Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials")
            .any(|f| {
                let p = &f["properties"];
                f["id"].as_str().is_some_and(|id| {
                    id.to_ascii_lowercase()
                        .starts_with(&format!("{identity_id}/"))
                }) && p["issuer"] == issuer
                    && p["subject"] == subject.as_str()
                    && p["audiences"]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|x| x == TOKEN_AUDIENCE))
            });
    if !federated {
        return Err(format!("AADSTS70021: no federated credential of identity {identity_id} matches issuer {issuer} and subject {subject}"));
    }
    let endpoint = env("JCLOUDS_ENDPOINT");
    let account = of_type("Microsoft.Storage/storageAccounts")
        .find(|a| {
            a["properties"]["primaryEndpoints"]["blob"]
                .as_str()
                .is_some_and(|b| b.trim_end_matches('/') == endpoint.trim_end_matches('/'))
        })
        .ok_or_else(|| format!("no storage account answers at JCLOUDS_ENDPOINT {endpoint}"))?;
    let account_id = account["id"].as_str().unwrap_or_default().to_string();
    let principal = identity["properties"]["principalId"]
        .as_str()
        .unwrap_or_default();
    let lower = account_id.to_ascii_lowercase();
    let granted = of_type("Microsoft.Authorization/roleAssignments").any(|r| {
        let p = &r["properties"];
        let scope = p["scope"].as_str().unwrap_or_default().to_ascii_lowercase();
        p["principalId"] == principal
            && p["roleDefinitionId"]
                .as_str()
                .is_some_and(|d| d.ends_with(BLOB_DATA_CONTRIBUTOR))
            && (lower == scope || lower.starts_with(&format!("{scope}/")))
    });
    if !granted {
        return Err(format!("AuthorizationPermissionMismatch: identity {identity_id} holds no Storage Blob Data Contributor on {account_id}"));
    }
    Ok(account_id)
}

fn object(blobs: &Blobs, req: &Req, container: &str, key: &str) -> Response<Body> {
    let no_bucket = || s3_error(404, "NoSuchBucket", "The specified bucket does not exist");
    match req.method {
        Method::PUT => match blobs.put(container, key, req.body.to_vec()) {
            true => Response::builder()
                .status(200)
                .header(
                    "etag",
                    format!("\"{}\"", &hex(&Sha256::digest(&req.body))[..32]),
                )
                .body(Body::default())
                .unwrap_or_default(),
            false => no_bucket(),
        },
        Method::GET | Method::HEAD => match blobs.get(container, key) {
            Read::NoContainer => no_bucket(),
            Read::NoBlob => s3_error(404, "NoSuchKey", "The specified key does not exist."),
            Read::Blob(data) => Response::builder()
                .status(200)
                .header("content-length", data.len())
                .header(
                    "etag",
                    format!("\"{}\"", &hex(&Sha256::digest(&data))[..32]),
                )
                .header("content-type", "application/octet-stream")
                .body(if req.method == Method::HEAD {
                    Body::default()
                } else {
                    Body::from(data)
                })
                .unwrap_or_default(),
        },
        Method::DELETE => {
            blobs.delete(container, key);
            Response::builder()
                .status(204)
                .body(Body::default())
                .unwrap_or_default()
        }
        _ => s3_error(
            405,
            "MethodNotAllowed",
            "The specified method is not allowed against this resource.",
        ),
    }
}
