//! A proxy in front of a cloud emulator (moto).
//!
//! Everything is forwarded untouched except what the emulator lacks or
//! gets wrong, where the proxy speaks the documented wire format itself:
//!
//! - **EKS add-ons** (`/clusters/NAME/addons…`, REST-JSON): moto 5.2.5 has
//!   none. Kept in memory, with the asynchronous life AWS gives them: an
//!   add-on is `CREATING` (or `UPDATING`, `DELETING`) for the first
//!   Describe after a change, so waiters are exercised.
//! - **EKS Pod Identity associations**
//!   (`/clusters/NAME/pod-identity-associations…`): none in moto either;
//!   kept in memory ([`crate::eks_pod_identity`]).
//! - **EKS clusters' endpoints**, when the proxy is started with a
//!   Kubernetes API server to stand for them ([`start_with_kube`]): moto
//!   answers with a name nothing listens on; the proxy puts the stand-in's
//!   URL and CA in every cluster it returns, so a configuration that
//!   reaches its cluster through `aws_eks_cluster` reaches the stand-in.
//! - **Capacity shortages** ([`crate::capacity`]): a node group that
//!   would launch nodes where a shortage is set is refused with EKS's
//!   `UnsupportedAvailabilityZoneException`, or made and then shown
//!   `CREATE_FAILED` (`DEGRADED` after a resize) with the health issue EKS
//!   reports, `AsgInstanceLaunchFailures` naming EC2's
//!   `InsufficientInstanceCapacity` and the zone. moto never runs short.
//! - **Spot placement scores** (`GetSpotPlacementScores`): none in moto;
//!   answered from the shortages ([`crate::spot_scores`]).
//! - **Capacity Reservations and Capacity Blocks** (create, describe,
//!   cancel; block offerings and purchase): none in moto; held by the
//!   proxy ([`crate::reservations`]).
//! - **S3 GetBucketVersioning**: moto answers with the root element
//!   `GetBucketVersioningResponse`; S3 (and the Rust SDK's parser) use
//!   `VersioningConfiguration`.

use crate::capacity::{Ask, Form, Shortages};
use crate::kubernetes::{Endpoint, PoolNodes};
use crate::node_records::NodeRecords;
use crate::reservations::{Launch, Market};
use crate::{aws_error, eks_addons, eks_pod_identity, serve, Body, Injection, Req, Server};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

impl Injection {
    /// An EC2 error (query protocol: XML with `Errors/Error/Code`).
    pub fn ec2_error(
        action: &str,
        status: u16,
        code: &str,
        message: &str,
        times: u32,
    ) -> Injection {
        Injection {
            matching: vec![format!("Action={action}")],
            times,
            status,
            headers: vec![("content-type".into(), "text/xml".into())],
            body: format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error></Errors><RequestID>injected</RequestID></Response>"
            ),
        }
    }

    /// An STS or IAM success (query protocol: `<ActionResponse><ActionResult>`).
    pub fn query_result(action: &str, namespace: &str, result: &str, times: u32) -> Injection {
        Injection {
            matching: vec![format!("Action={action}")],
            times,
            status: 200,
            headers: vec![("content-type".into(), "text/xml".into())],
            body: format!(
                "<{action}Response xmlns=\"{namespace}\"><{action}Result>{result}</{action}Result><ResponseMetadata><RequestId>injected</RequestId></ResponseMetadata></{action}Response>"
            ),
        }
    }

    /// A REST-JSON answer (EKS) to requests whose method and path match.
    pub fn rest_json(
        method: &str,
        path: &str,
        status: u16,
        body: serde_json::Value,
        times: u32,
    ) -> Injection {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if status >= 400 {
            if let Some(kind) = body.get("__type").and_then(|t| t.as_str()) {
                headers.push(("x-amzn-ErrorType".into(), kind.to_string()));
            }
        }
        Injection {
            matching: vec![format!("{method} {path}")],
            times,
            status,
            headers,
            body: body.to_string(),
        }
    }
}

struct Shared {
    upstream: String,
    /// The API server EKS clusters' endpoints are set to, where node
    /// groups' nodes join.
    kube: Option<Endpoint>,
    client: Client<hyper_util::client::legacy::connect::HttpConnector, Body>,
    addons: Mutex<eks_addons::Addons>,
    pod_identity: Mutex<eks_pod_identity::Associations>,
    shortages: Shortages,
    /// Node groups (`cluster/name`) failing for lack of capacity: the
    /// status and health issue message they show.
    failing: Mutex<BTreeMap<String, (&'static str, String)>>,
    reservations: crate::reservations::Reservations,
    /// Node groups (`cluster/name`) made without instance types, which
    /// their launch template names: moto fills in `t3.medium`, EKS
    /// answers none.
    typed_by_template: Mutex<std::collections::BTreeSet<String>>,
    /// Node groups' version updates, which moto lacks.
    versions: crate::eks_versions::Versions,
    /// Node groups' instances that stopped, which moto keeps none of.
    node_records: crate::node_records::NodeRecords,
    /// NAT gateways' bytes sent out, which moto cannot answer.
    nat: crate::cloudwatch::NatMetrics,
}

/// Starts a proxy for `upstream` (`http://127.0.0.1:PORT`) on a free port.
pub fn start(upstream: &str) -> std::io::Result<Server> {
    start_inner(upstream, None, Handles::default())
}

/// What the sandbox shares with the proxy: the shortages node groups
/// meet, the records of their stopped instances (and the clock
/// reservations' windows go by), the calls whose answers are held, the
/// bytes NAT gateways sent out.
#[derive(Default)]
pub struct Handles {
    pub shortages: Shortages,
    pub records: NodeRecords,
    pub holds: crate::capacity::Holds,
    pub nat: crate::cloudwatch::NatMetrics,
}

/// The same, with every EKS cluster's endpoint and CA those of the
/// Kubernetes API server `kube` (where node groups' nodes join), and the
/// sandbox's `handles`.
pub fn start_with_kube(
    upstream: &str,
    kube: Endpoint,
    handles: Handles,
) -> std::io::Result<Server> {
    start_inner(upstream, Some(kube), handles)
}

fn start_inner(
    upstream: &str,
    kube: Option<Endpoint>,
    handles: Handles,
) -> std::io::Result<Server> {
    let Handles {
        shortages,
        records,
        holds,
        nat,
    } = handles;
    let clock = records.clock();
    let shared = Arc::new(Shared {
        upstream: upstream.trim_end_matches('/').to_string(),
        kube,
        client: Client::builder(TokioExecutor::new()).build_http(),
        addons: Mutex::new(eks_addons::Addons::default()),
        pod_identity: Mutex::new(eks_pod_identity::Associations::default()),
        shortages,
        failing: Mutex::new(BTreeMap::new()),
        reservations: crate::reservations::Reservations::new(clock),
        typed_by_template: Default::default(),
        versions: Default::default(),
        node_records: records,
        nat,
    });
    serve(move |req| {
        let (shared, holds) = (shared.clone(), holds.clone());
        async move {
            let held = holds.holds(&crate::faults::call_name(&req));
            let answer = handle(shared, req).await;
            if held {
                // Acted on, never answered: the client dies waiting.
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            }
            answer
        }
    })
}

async fn handle(shared: Arc<Shared>, req: Req) -> Response<Body> {
    let answered = shared.addons.lock().ok().and_then(|mut a| {
        match eks_addons::untag_arn(&req.method, &req.path) {
            Some(arn) => a.untag(&arn, &req.query),
            None => a.handle(&req.method, &req.path, &req.body),
        }
    });
    let answered = answered.or_else(|| {
        let mut p = shared.pod_identity.lock().ok()?;
        p.handle(&req.method, &req.path, &req.query, &req.body)
    });
    if let Some(resp) = answered {
        return resp;
    }
    if let Some(refused) = capacity(&shared, &req).await {
        return refused;
    }
    if let Some(answered) = version_update(&shared, &req).await {
        return answered;
    }
    if let Some(scores) = crate::spot_scores::answer(&shared.shortages, &req) {
        return scores;
    }
    if let Some(held) = shared.reservations.answer(&req, &region_of(&req)) {
        return held;
    }
    if let Some(grouped) = shared.reservations.answer_group(&req, &region_of(&req)) {
        return grouped;
    }
    if let Some(stopped) = shared.node_records.answer(&req) {
        return stopped;
    }
    if let Some(metrics) = shared.nat.answer(&req) {
        return metrics;
    }
    let Req {
        method,
        path,
        query,
        headers,
        body,
    } = req;
    note_node_group(&shared, &method, &path, &body);
    let target = if query.is_empty() {
        format!("{}{path}", shared.upstream)
    } else {
        format!("{}{path}?{query}", shared.upstream)
    };
    let mut fwd = Request::builder().method(method.clone()).uri(target);
    for (k, v) in &headers {
        fwd = fwd.header(k, v);
    }
    let Ok(fwd) = fwd.body(Full::new(body.clone())) else {
        return aws_error(502, "Proxy", "cannot forward the request");
    };
    let resp = match shared.client.request(fwd).await {
        Ok(r) => r,
        Err(e) => return aws_error(502, "Proxy", &e.to_string()),
    };
    let (mut rparts, rbody) = resp.into_parts();
    let mut bytes = rbody
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    if method == hyper::Method::GET && query == "versioning" {
        let text = String::from_utf8_lossy(&bytes)
            .replace("GetBucketVersioningResponse", "VersioningConfiguration");
        bytes = Bytes::from(text);
        rparts.headers.remove(hyper::header::CONTENT_LENGTH);
    }
    if method == hyper::Method::GET {
        if let Some(shown) = failing_group(&shared, &path, &bytes) {
            bytes = Bytes::from(shown);
            rparts.headers.remove(hyper::header::CONTENT_LENGTH);
        }
    }
    if method == hyper::Method::DELETE {
        if let Ok(mut f) = shared.failing.lock() {
            f.remove(
                path.trim_start_matches("/clusters/")
                    .replace("/node-groups/", "/")
                    .as_str(),
            );
        }
    }
    if rparts.status.is_success() {
        node_group_nodes(&shared, &method, &path, &headers, &body).await;
        shared.nat.note(&body, &bytes);
        if method == hyper::Method::POST {
            shared.reservations.note_group(&path, &body, &bytes);
        }
    }
    if body.starts_with(b"Action=DescribeLaunchTemplateVersions") {
        if let Some(corrected) = without_echoed_template_tags(&bytes) {
            bytes = Bytes::from(corrected);
            rparts.headers.remove(hyper::header::CONTENT_LENGTH);
        }
    }
    if body.starts_with(b"Action=DescribeSecurityGroupRules") {
        bytes = Bytes::from(with_rule_owners(&bytes));
        rparts.headers.remove(hyper::header::CONTENT_LENGTH);
    }
    if path.starts_with("/clusters") {
        if let Some(corrected) = corrected_group(&shared, &bytes) {
            bytes = Bytes::from(corrected);
            rparts.headers.remove(hyper::header::CONTENT_LENGTH);
        }
        if let Some(corrected) = without_invented_remote_access(&bytes) {
            bytes = Bytes::from(corrected);
            rparts.headers.remove(hyper::header::CONTENT_LENGTH);
        }
    }
    if let (Some(k), true) = (&shared.kube, path.starts_with("/clusters")) {
        if let Some(rewritten) = point_cluster(&bytes, k) {
            bytes = Bytes::from(rewritten);
            rparts.headers.remove(hyper::header::CONTENT_LENGTH);
        }
    }
    Response::from_parts(rparts, Full::new(bytes))
}

/// moto's account, which every credential of the tests maps to.
const MOTO_ACCOUNT: &str = "123456789012";

/// Security group rules with the account of their group, which AWS gives
/// (`groupOwnerId`) and moto 5.2.5 leaves out: the driver builds a rule's
/// ARN from it rather than asking STS who it is.
fn with_rule_owners(body: &[u8]) -> String {
    String::from_utf8_lossy(body).replace(
        "</securityGroupRuleId>",
        &format!("</securityGroupRuleId><groupOwnerId>{MOTO_ACCOUNT}</groupOwnerId>"),
    )
}

/// A launch template version without the template's own tags, which moto
/// 5.2.5 copies from CreateLaunchTemplate's tag specifications into the
/// launch data (`resourceType` `launch-template`, which AWS refuses there):
/// the AWS provider would plan to remove them from every tagged template.
fn without_echoed_template_tags(body: &[u8]) -> Option<String> {
    const OPEN: &str = "<item><resourceType>launch-template</resourceType><tagSet>";
    const CLOSE: &str = "</tagSet></item>";
    let mut text = String::from_utf8_lossy(body).into_owned();
    let mut changed = false;
    while let Some(start) = text.find(OPEN) {
        let end = start + text[start..].find(CLOSE)? + CLOSE.len();
        text.replace_range(start..end, "");
        changed = true;
    }
    changed.then_some(text)
}

/// Notes a node group created with a launch template and no instance
/// types, and forgets one deleted (and the reserved instances it used).
fn note_node_group(shared: &Shared, method: &hyper::Method, path: &str, body: &[u8]) {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let Ok(mut set) = shared.typed_by_template.lock() else {
        return;
    };
    match (method, segments.as_slice()) {
        (&hyper::Method::POST, ["clusters", c, "node-groups"]) => {
            let asked: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
            let (Some(n), true) = (
                asked["nodegroupName"].as_str(),
                asked["instanceTypes"].is_null() && asked["launchTemplate"].is_object(),
            ) else {
                return;
            };
            set.insert(format!("{c}/{n}"));
        }
        (&hyper::Method::DELETE, ["clusters", c, "node-groups", n]) => {
            set.remove(&format!("{c}/{n}"));
            shared.reservations.release(&format!("{c}/{n}"));
            shared.versions.forget(c, n);
        }
        _ => {}
    }
}

/// An EKS answer carrying a `nodegroup` without the `remoteAccess` moto
/// 5.2.5 invents for a group created without one (`{"ec2SshKey":
/// "eksKeypair"}`), which EKS leaves out; the AWS provider would plan to
/// replace every such group to remove it.
fn without_invented_remote_access(body: &[u8]) -> Option<String> {
    let mut v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let group = v.get_mut("nodegroup")?.as_object_mut()?;
    let invented = serde_json::json!({"ec2SshKey": "eksKeypair"});
    if group.get("remoteAccess") != Some(&invented) {
        return None;
    }
    group.remove("remoteAccess");
    Some(v.to_string())
}

/// An EKS answer carrying a `cluster`, with its endpoint and CA replaced
/// by those of its own cluster in the Kubernetes stand-in.
fn point_cluster(body: &[u8], kube: &Endpoint) -> Option<String> {
    use base64::Engine;
    let mut v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let cluster = v.get_mut("cluster")?.as_object_mut()?;
    let url = kube.of(cluster.get("name")?.as_str()?);
    cluster.insert("endpoint".into(), serde_json::json!(url));
    cluster.insert(
        "certificateAuthority".into(),
        serde_json::json!({"data": base64::engine::general_purpose::STANDARD.encode(&kube.ca_pem)}),
    );
    Some(v.to_string())
}

/// A request straight to moto (the proxy's own questions), its body.
async fn ask_upstream(
    shared: &Shared,
    req: &Req,
    method: &str,
    path: &str,
    body: String,
) -> Option<Bytes> {
    let mut fwd = Request::builder()
        .method(method)
        .uri(format!("{}{path}", shared.upstream));
    // moto picks the service and region from the credential scope: the
    // caller's region, and the service the question is for.
    let service = if body.is_empty() { "/eks/" } else { "/ec2/" };
    if let Some(auth) = req
        .headers
        .get("authorization")
        .and_then(|a| a.to_str().ok())
    {
        fwd = fwd.header("authorization", auth.replace("/eks/", service));
    }
    if !body.is_empty() {
        fwd = fwd.header("content-type", "application/x-www-form-urlencoded");
    }
    let resp = shared
        .client
        .request(fwd.body(Full::new(Bytes::from(body))).ok()?)
        .await
        .ok()?;
    resp.into_body().collect().await.ok().map(|b| b.to_bytes())
}

/// The region a SigV4-signed request is for.
fn region_of(req: &Req) -> String {
    req.headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|a| a.split("Credential=").nth(1))
        .and_then(|c| c.split('/').nth(2))
        .unwrap_or("us-east-1")
        .to_string()
}

/// Launches a node group's nodes into the reservation its launch template
/// targets, if it targets one, by EC2's rules for that.
async fn held_launch(
    shared: &Shared,
    req: &Req,
    group: &serde_json::Value,
    launch: &Launch<'_>,
) -> Result<(), String> {
    let template = template_data(shared, req, group).await.unwrap_or_default();
    if let Some(arn) = xml_text(&template, "capacityReservationResourceGroupArn") {
        return shared.reservations.launch_group(arn, launch);
    }
    let Some(id) = xml_text(&template, "capacityReservationId") else {
        shared.reservations.release(&launch.group);
        return Ok(());
    };
    let market = Market {
        template: xml_text(&template, "marketType"),
        capacity_type: group["capacityType"].as_str(),
    };
    shared.reservations.launch(id, &market, launch)
}

/// The first `<tag>`'s text in `xml`.
fn xml_text<'x>(xml: &'x str, tag: &str) -> Option<&'x str> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    xml[start..].split('<').next()
}

/// The launch data of the version of its launch template a node group
/// uses, as moto answers it (XML).
async fn template_data(shared: &Shared, req: &Req, group: &serde_json::Value) -> Option<String> {
    let id = group["launchTemplate"]["id"].as_str()?;
    let version = group["launchTemplate"]["version"]
        .as_str()
        .unwrap_or("$Latest");
    let body = format!(
        "Action=DescribeLaunchTemplateVersions&Version=2016-11-15&LaunchTemplateId={id}&LaunchTemplateVersion.1={}",
        percent_encoding::utf8_percent_encode(version, percent_encoding::NON_ALPHANUMERIC)
    );
    let xml = ask_upstream(shared, req, "POST", "/", body).await?;
    Some(String::from_utf8_lossy(&xml).into_owned())
}

/// What a node group's nodes are: its instance type, else its launch
/// template's (a Capacity Block's node group names its type there only).
async fn instance_type_of(shared: &Shared, req: &Req, group: &serde_json::Value) -> String {
    if let Some(t) = strings(&group["instanceTypes"]).into_iter().next() {
        return t;
    }
    let template = template_data(shared, req, group).await.unwrap_or_default();
    xml_text(&template, "instanceType")
        .unwrap_or_default()
        .to_string()
}

/// The zones of subnets, as moto has them.
async fn zones_of(shared: &Shared, req: &Req, subnets: &[String]) -> Vec<String> {
    let mut body = String::from("Action=DescribeSubnets&Version=2016-11-15");
    for (i, s) in subnets.iter().enumerate() {
        body.push_str(&format!("&SubnetId.{}={s}", i + 1));
    }
    let Some(xml) = ask_upstream(shared, req, "POST", "/", body).await else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&xml);
    let mut zones: Vec<String> = text
        .split("<availabilityZone>")
        .skip(1)
        .filter_map(|rest| rest.split('<').next().map(str::to_string))
        .collect();
    zones.sort();
    zones.dedup();
    zones
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect()
}

/// A node group create or resize that meets a shortage: refused (the
/// answer), or let through and then shown failing.
async fn capacity(shared: &Shared, req: &Req) -> Option<Response<Body>> {
    if req.method != hyper::Method::POST {
        return None;
    }
    let segments: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
    let asked: serde_json::Value = serde_json::from_slice(&req.body).ok()?;
    let (cluster, name, group, grows, resize) = match segments.as_slice() {
        ["clusters", c, "node-groups"] => {
            let name = asked["nodegroupName"].as_str()?.to_string();
            let grows = asked["scalingConfig"]["desiredSize"].as_u64().unwrap_or(0);
            (c.to_string(), name, asked.clone(), grows, false)
        }
        ["clusters", c, "node-groups", n, "update-config"] => {
            let group = group_now(shared, req, c, n).await?;
            let was = group["scalingConfig"]["desiredSize"].as_u64().unwrap_or(0);
            let will = asked["scalingConfig"]["desiredSize"]
                .as_u64()
                .unwrap_or(was);
            (
                c.to_string(),
                n.to_string(),
                group,
                will.saturating_sub(was),
                true,
            )
        }
        _ => return None,
    };
    let subnets = strings(&group["subnets"]);
    let zones = zones_of(shared, req, &subnets).await;
    let region = region_of(req);
    let instance_type = instance_type_of(shared, req, &group).await;
    let wanted = asked["scalingConfig"]["desiredSize"]
        .as_u64()
        .or_else(|| group["scalingConfig"]["desiredSize"].as_u64())
        .unwrap_or(0);
    let launch = Launch {
        group: format!("{cluster}/{name}"),
        region: &region,
        instance_type: &instance_type,
        zones: &zones,
        nodes: wanted,
    };
    if let Err(why) = held_launch(shared, req, &group, &launch).await {
        let status = if resize { "DEGRADED" } else { "CREATE_FAILED" };
        if let Ok(mut f) = shared.failing.lock() {
            f.insert(launch.group.clone(), (status, format!("Could not launch On-Demand Instances. {why} Launching EC2 instance failed.")));
        }
        return None;
    }
    let spot = group["capacityType"].as_str() == Some("SPOT");
    let hit = shared.shortages.hit(&Ask {
        region: &region,
        zones: &zones,
        instance_type: &instance_type,
        capacity: if spot { "spot" } else { "on_demand" },
        nodes: grows,
    })?;
    let zone = hit
        .zone
        .clone()
        .or_else(|| zones.first().cloned())
        .unwrap_or_default();
    match hit.shortage.form {
        Form::Refused => {
            let others: Vec<&String> = zones.iter().filter(|z| **z != zone).collect();
            let message = format!(
                "Cannot create node group {name} because {zone}, the targeted availability zone, does not currently have sufficient capacity to support the node group. Retry and choose from these availability zones: {}",
                others.iter().map(|z| z.as_str()).collect::<Vec<_>>().join(", ")
            );
            Some(aws_error(
                400,
                "UnsupportedAvailabilityZoneException",
                &message,
            ))
        }
        Form::NoGpus => None,
        Form::AfterCreate => {
            let kind = if spot { "Spot" } else { "On-Demand" };
            let message = format!(
                "Could not launch {kind} Instances. InsufficientInstanceCapacity - We currently do not have sufficient {instance_type} capacity in the Availability Zone you requested ({zone}). Our system will be working on provisioning additional capacity. Launching EC2 instance failed."
            );
            let status = if resize { "DEGRADED" } else { "CREATE_FAILED" };
            if let Ok(mut f) = shared.failing.lock() {
                f.insert(format!("{cluster}/{name}"), (status, message));
            }
            None
        }
    }
}

/// `UpdateNodegroupVersion` (which moto lacks), refused for a Capacity
/// Block's node group with nodes, which EKS updates only at zero ("Create
/// a managed node group with Capacity Blocks for ML": set the desired
/// size to 0 before an upgrade).
async fn version_update(shared: &Shared, req: &Req) -> Option<Response<Body>> {
    let segments: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
    let ["clusters", c, "node-groups", n, "update-version"] = segments.as_slice() else {
        return None;
    };
    let group = group_now(shared, req, c, n).await?;
    let nodes = group["scalingConfig"]["desiredSize"].as_u64().unwrap_or(0);
    if group["capacityType"].as_str() == Some("CAPACITY_BLOCK") && nodes > 0 {
        return Some(aws_error(
            400,
            "InvalidParameterException",
            &format!("Nodegroup {n} runs on a Capacity Block: set its desired size to 0 before updating its version ({nodes} nodes now)."),
        ));
    }
    Some(shared.versions.update(c, n, &req.body))
}

/// Node group `c/n` as EKS would describe it now: moto's, with what the
/// proxy corrects and keeps laid over it.
async fn group_now(shared: &Shared, req: &Req, c: &str, n: &str) -> Option<serde_json::Value> {
    let now = ask_upstream(
        shared,
        req,
        "GET",
        &format!("/clusters/{c}/node-groups/{n}"),
        String::new(),
    )
    .await?;
    let text =
        corrected_group(shared, &now).unwrap_or_else(|| String::from_utf8_lossy(&now).into_owned());
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(v["nodegroup"].clone())
}

/// An EKS answer carrying a `nodegroup`, with the version updates laid
/// over it and without the instance types moto invents.
fn corrected_group(shared: &Shared, body: &[u8]) -> Option<String> {
    let mut v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let group = v.get_mut("nodegroup")?.as_object_mut()?;
    let laid = shared.versions.lay_over(group);
    let key = format!(
        "{}/{}",
        group.get("clusterName")?.as_str()?,
        group.get("nodegroupName")?.as_str()?
    );
    let typed = shared.typed_by_template.lock().ok()?.contains(&key);
    if typed {
        group.remove("instanceTypes");
    }
    (laid || typed).then(|| v.to_string())
}

/// A DescribeNodegroup answer for a node group that is failing for lack
/// of capacity, shown as EKS shows it.
fn failing_group(shared: &Shared, path: &str, body: &[u8]) -> Option<String> {
    let key = path
        .strip_prefix("/clusters/")?
        .replace("/node-groups/", "/");
    let (status, message) = shared.failing.lock().ok()?.get(&key)?.clone();
    let mut v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let group = v.get_mut("nodegroup")?.as_object_mut()?;
    group.insert("status".into(), serde_json::json!(status));
    group.insert(
        "health".into(),
        serde_json::json!({"issues": [{"code": "AsgInstanceLaunchFailures", "message": message, "resourceIds": []}]}),
    );
    Some(v.to_string())
}

/// After a node group's create, resize or delete went through, its
/// nodes join or leave the cluster (unless it is failing for lack of
/// capacity), labelled as EKS's bootstrap labels them.
async fn node_group_nodes(
    shared: &Shared,
    method: &hyper::Method,
    path: &str,
    headers: &hyper::HeaderMap,
    body: &[u8],
) {
    let Some(nodes) = shared.kube.as_ref().and_then(|k| k.nodes.clone()) else {
        return;
    };
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (cluster, name) = match (method, segments.as_slice()) {
        (&hyper::Method::DELETE, ["clusters", c, "node-groups", n]) => {
            let p = PoolNodes {
                cluster: c,
                key: "eks.amazonaws.com/nodegroup",
                pool: n,
                labels: &serde_json::Value::Null,
                gpus_per_node: 0,
                gpus_withheld: false,
            };
            nodes.scale(&p, 0);
            return;
        }
        (&hyper::Method::POST, ["clusters", c, "node-groups", n, "update-config"]) => {
            (c.to_string(), n.to_string())
        }
        (&hyper::Method::POST, ["clusters", c, "node-groups"]) => {
            let asked: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
            let Some(n) = asked["nodegroupName"].as_str() else {
                return;
            };
            (c.to_string(), n.to_string())
        }
        _ => return,
    };
    let failing = shared
        .failing
        .lock()
        .is_ok_and(|f| f.contains_key(&format!("{cluster}/{name}")));
    if failing {
        return;
    }
    let req = Req {
        method: hyper::Method::GET,
        path: String::new(),
        query: String::new(),
        headers: headers.clone(),
        body: Bytes::new(),
    };
    let Some(group) = group_now(shared, &req, &cluster, &name).await else {
        return;
    };
    let group = &group;
    let instance_type = instance_type_of(shared, &req, group).await;
    let desired = group["scalingConfig"]["desiredSize"].as_u64().unwrap_or(0);
    let p = PoolNodes {
        cluster: &cluster,
        key: "eks.amazonaws.com/nodegroup",
        pool: &name,
        labels: &group["labels"],
        gpus_per_node: crate::capacity::gpus_of("aws", &instance_type),
        gpus_withheld: shared.shortages.withholds_gpus(&Ask {
            region: &region_of(&req),
            zones: &[],
            instance_type: &instance_type,
            capacity: match group["capacityType"].as_str() {
                Some("SPOT") => "spot",
                _ => "on_demand",
            },
            nodes: desired,
        }),
    };
    nodes.scale(&p, desired);
    let spot = group["capacityType"] == "SPOT";
    shared
        .node_records
        .sized(&cluster, &name, desired, spot, &instance_type);
}
