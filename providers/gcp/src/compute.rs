//! Compute Engine's network objects. Networks, subnetworks, routers and
//! firewalls share one life (insert, patch and delete are operations; a
//! collection lists in pages; the name is the identity), so one
//! [`Compute`] kind serves them all from a [`Spec`]. Cloud NAT lives inside
//! its router ([`RouterNat`]).

use crate::api::{self, carry, compute_op, last, tf};
use crate::schema::{project, timeouts};
use crate::Ctx;
use async_trait::async_trait;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::time::Duration;
use strata_provider::values::{block, list_block_max1};
use strata_provider::wait::timeout;
use strata_provider::{
    AttributeSchema as A, BlockNesting, DriverError, Kind, PlanRequest, Planned, ResourceSchema,
    Tags,
};
use strata_rest::fields::{array, f, object, out, to_api, Field};
use strata_rest::labels::{is_marker, marker};
use strata_rest::Method;
use strata_value::types::Type;
use strata_value::value::Value;

const TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// One Compute Engine type.
pub struct Spec {
    pub type_name: &'static str,
    /// The collection in the URL: `networks`.
    pub collection: &'static str,
    pub regional: bool,
    pub fields: &'static [Field],
    pub schema: fn() -> ResourceSchema,
    /// Attributes a PATCH changes in place; any other change replaces.
    pub patch: &'static [&'static str],
}

pub struct Compute(pub &'static Spec);

fn string() -> Type {
    Type::String
}

pub static NETWORK: Spec = Spec {
    type_name: "google_compute_network",
    collection: "networks",
    regional: false,
    fields: &[
        f("name", "name"),
        f("description", "description"),
        f("auto_create_subnetworks", "autoCreateSubnetworks"),
        f("routing_mode", "routingConfig.routingMode"),
        f("mtu", "mtu"),
        out("gateway_ipv4", "gatewayIPv4"),
        out("self_link", "selfLink"),
        out("numeric_id", "id"),
    ],
    schema: || {
        let mut s = ResourceSchema::of_attributes(vec![
            (
                "name",
                A::required(string(), "The network's name.").force_new(),
            ),
            (
                "description",
                A::optional(string(), "A description.").force_new(),
            ),
            (
                "auto_create_subnetworks",
                A::optional(
                    Type::Bool,
                    "Whether GCP makes a subnetwork in every region (true unless set).",
                )
                .and_computed()
                .force_new(),
            ),
            (
                "routing_mode",
                A::optional(string(), "REGIONAL or GLOBAL dynamic routing.").and_computed(),
            ),
            (
                "mtu",
                A::optional(Type::Number, "The MTU in bytes.")
                    .and_computed()
                    .force_new(),
            ),
            ("project", project()),
            (
                "id",
                A::computed(string(), "projects/{project}/global/networks/{name}."),
            ),
            ("self_link", A::computed(string(), "The network's URL.")),
            (
                "gateway_ipv4",
                A::computed(string(), "The gateway address (legacy networks)."),
            ),
            (
                "numeric_id",
                A::computed(string(), "The numeric id GCP gave it."),
            ),
        ]);
        s.blocks.insert("timeouts".into(), timeouts());
        s
    },
    patch: &["routing_mode"],
};

const RANGE: &[Field] = &[
    f("range_name", "rangeName"),
    f("ip_cidr_range", "ipCidrRange"),
];

pub static SUBNETWORK: Spec = Spec {
    type_name: "google_compute_subnetwork",
    collection: "subnetworks",
    regional: true,
    fields: &[
        f("name", "name"),
        f("description", "description"),
        f("network", "network"),
        f("ip_cidr_range", "ipCidrRange"),
        array("secondary_ip_range", "secondaryIpRanges", RANGE),
        f("private_ip_google_access", "privateIpGoogleAccess"),
        out("gateway_address", "gatewayAddress"),
        out("fingerprint", "fingerprint"),
        out("self_link", "selfLink"),
        out("creation_timestamp", "creationTimestamp"),
    ],
    schema: || {
        let mut s = ResourceSchema::of_attributes(vec![
            (
                "name",
                A::required(string(), "The subnetwork's name.").force_new(),
            ),
            (
                "network",
                A::required(string(), "The network (name or self link).").force_new(),
            ),
            (
                "ip_cidr_range",
                A::required(string(), "The primary range; it may only grow in place."),
            ),
            (
                "region",
                A::optional(string(), "The region (else the provider's).")
                    .and_computed()
                    .force_new(),
            ),
            ("description", A::optional(string(), "A description.")),
            (
                "private_ip_google_access",
                A::optional(
                    Type::Bool,
                    "Whether VMs without external addresses reach Google APIs.",
                )
                .and_computed(),
            ),
            ("project", project()),
            (
                "id",
                A::computed(
                    string(),
                    "projects/{project}/regions/{region}/subnetworks/{name}.",
                ),
            ),
            ("self_link", A::computed(string(), "The subnetwork's URL.")),
            (
                "gateway_address",
                A::computed(string(), "The gateway address."),
            ),
            (
                "fingerprint",
                A::computed(string(), "The fingerprint patches are checked against."),
            ),
            (
                "creation_timestamp",
                A::computed(string(), "When it was made."),
            ),
        ]);
        s.blocks.insert(
            "secondary_ip_range".into(),
            block(
                BlockNesting::List,
                0,
                vec![
                    (
                        "range_name",
                        A::required(string(), "The range's name (pods, services)."),
                    ),
                    ("ip_cidr_range", A::required(string(), "The range.")),
                ],
            ),
        );
        s.blocks.insert("timeouts".into(), timeouts());
        s
    },
    patch: &[
        "description",
        "secondary_ip_range",
        "ip_cidr_range",
        "private_ip_google_access",
    ],
};

pub static ROUTER: Spec = Spec {
    type_name: "google_compute_router",
    collection: "routers",
    regional: true,
    fields: &[
        f("name", "name"),
        f("description", "description"),
        f("network", "network"),
        object(
            "bgp",
            "bgp",
            &[
                f("asn", "asn"),
                f("advertise_mode", "advertiseMode"),
                f("advertised_groups", "advertisedGroups"),
            ],
        ),
        out("self_link", "selfLink"),
        out("creation_timestamp", "creationTimestamp"),
    ],
    schema: || {
        let mut s = ResourceSchema::of_attributes(vec![
            (
                "name",
                A::required(string(), "The router's name.").force_new(),
            ),
            (
                "network",
                A::required(string(), "The network (name or self link).").force_new(),
            ),
            (
                "region",
                A::optional(string(), "The region (else the provider's).")
                    .and_computed()
                    .force_new(),
            ),
            ("description", A::optional(string(), "A description.")),
            ("project", project()),
            (
                "id",
                A::computed(
                    string(),
                    "projects/{project}/regions/{region}/routers/{name}.",
                ),
            ),
            ("self_link", A::computed(string(), "The router's URL.")),
            (
                "creation_timestamp",
                A::computed(string(), "When it was made."),
            ),
        ]);
        s.blocks.insert(
            "bgp".into(),
            list_block_max1(vec![
                (
                    "asn",
                    A::required(Type::Number, "The router's private ASN."),
                ),
                (
                    "advertise_mode",
                    A::optional(string(), "DEFAULT or CUSTOM.").and_computed(),
                ),
                (
                    "advertised_groups",
                    A::optional(Type::list(string()), "Groups advertised in CUSTOM mode."),
                ),
            ]),
        );
        s.blocks.insert("timeouts".into(), timeouts());
        s
    },
    patch: &["description", "bgp"],
};

const RULE: &[Field] = &[f("protocol", "IPProtocol"), f("ports", "ports")];

pub static FIREWALL: Spec = Spec {
    type_name: "google_compute_firewall",
    collection: "firewalls",
    regional: false,
    fields: &[
        f("name", "name"),
        f("description", "description"),
        f("network", "network"),
        f("priority", "priority"),
        f("direction", "direction"),
        f("source_ranges", "sourceRanges"),
        f("destination_ranges", "destinationRanges"),
        f("source_tags", "sourceTags"),
        f("target_tags", "targetTags"),
        array("allow", "allowed", RULE),
        array("deny", "denied", RULE),
        f("disabled", "disabled"),
        out("self_link", "selfLink"),
        out("creation_timestamp", "creationTimestamp"),
    ],
    schema: || {
        let strings = || Type::set(string());
        let mut s = ResourceSchema::of_attributes(vec![
            (
                "name",
                A::required(string(), "The rule's name.").force_new(),
            ),
            (
                "network",
                A::required(string(), "The network (name or self link).").force_new(),
            ),
            ("description", A::optional(string(), "A description.")),
            (
                "priority",
                A::optional(Type::Number, "0-65535, lower first (1000).").and_computed(),
            ),
            (
                "direction",
                A::optional(string(), "INGRESS or EGRESS (INGRESS).")
                    .and_computed()
                    .force_new(),
            ),
            (
                "source_ranges",
                A::optional(strings(), "Source CIDR ranges (ingress).").and_computed(),
            ),
            (
                "destination_ranges",
                A::optional(strings(), "Destination CIDR ranges (egress).").and_computed(),
            ),
            (
                "source_tags",
                A::optional(strings(), "Source network tags."),
            ),
            (
                "target_tags",
                A::optional(strings(), "Target network tags."),
            ),
            (
                "disabled",
                A::optional(Type::Bool, "Whether the rule is off.").and_computed(),
            ),
            ("project", project()),
            (
                "id",
                A::computed(string(), "projects/{project}/global/firewalls/{name}."),
            ),
            ("self_link", A::computed(string(), "The rule's URL.")),
            (
                "creation_timestamp",
                A::computed(string(), "When it was made."),
            ),
        ]);
        let rule = || {
            block(
                BlockNesting::Set,
                0,
                vec![
                    (
                        "protocol",
                        A::required(string(), "tcp, udp, icmp, all, or a protocol number."),
                    ),
                    (
                        "ports",
                        A::optional(
                            Type::list(string()),
                            "Ports and ranges (\"443\", \"30000-32767\").",
                        ),
                    ),
                ],
            )
        };
        s.blocks.insert("allow".into(), rule());
        s.blocks.insert("deny".into(), rule());
        s.blocks.insert("timeouts".into(), timeouts());
        s
    },
    patch: &[
        "description",
        "priority",
        "source_ranges",
        "destination_ranges",
        "source_tags",
        "target_tags",
        "allow",
        "deny",
        "disabled",
    ],
};

/// Where one object lives.
struct Place {
    project: String,
    /// The region, for regional types.
    region: Option<String>,
    name: String,
}

impl Place {
    fn scope(&self) -> String {
        match &self.region {
            Some(r) => format!("projects/{}/regions/{r}", self.project),
            None => format!("projects/{}/global", self.project),
        }
    }
}

impl Compute {
    fn place(&self, c: &Ctx, j: &Json) -> Result<Place, DriverError> {
        let t = self.0.type_name;
        Ok(Place {
            project: c.project(j, t)?,
            region: if self.0.regional {
                Some(c.region(j, t)?)
            } else {
                None
            },
            name: api::required(j, t, "name")?,
        })
    }

    fn collection_url(&self, c: &Ctx, p: &Place) -> String {
        format!("{}{}/{}", c.endpoints.compute, p.scope(), self.0.collection)
    }

    fn item_url(&self, c: &Ctx, p: &Place) -> String {
        format!("{}/{}", self.collection_url(c, p), p.name)
    }

    /// An API object as the Terraform-shaped object, `like` (the prior or
    /// planned object) lending what only the configuration knows.
    fn value(&self, p: &Place, o: &Json, like: Option<&Json>) -> Result<Value, DriverError> {
        let mut j = strata_rest::fields::from_api(self.0.fields, o);
        j["project"] = json!(p.project);
        if let Some(r) = &p.region {
            j["region"] = json!(r);
        }
        j["id"] = json!(format!("{}/{}/{}", p.scope(), self.0.collection, p.name));
        if j["description"].as_str().is_some_and(is_marker) {
            j["description"] = Json::Null;
        }
        if let Some(like) = like {
            // The API answers with the network's URL; the configuration's
            // form (a name, a path) is kept when it names the same network.
            if let (Some(had), Some(now)) = (like["network"].as_str(), j["network"].as_str()) {
                if last(had) == last(now) {
                    j["network"] = json!(had);
                }
            }
            carry(&mut j, like, &["timeouts"]);
        }
        api::value(&(self.0.schema)(), self.0.type_name, &j)
    }

    async fn get(&self, c: &Ctx, p: &Place) -> Result<Option<Json>, DriverError> {
        c.rest
            .get(&format!("GET {}", self.0.collection), &self.item_url(c, p))
            .await
    }

    async fn wait(&self, c: &Ctx, what: &str, op: &Json, t: Duration) -> Result<(), DriverError> {
        compute_op(c, &format!("{what} {}", self.0.type_name), op, t).await
    }

    /// A PATCH body with the patchable attributes that differ, nulls
    /// clearing what the configuration no longer sets (JSON merge patch).
    fn patch_body(&self, prior: &Json, planned: &Json, tags_desc: Option<&Json>) -> Json {
        let changed: Vec<&str> = self
            .0
            .patch
            .iter()
            .copied()
            .filter(|k| prior[*k] != planned[*k])
            .collect();
        let mut only = serde_json::Map::new();
        for k in &changed {
            only.insert(k.to_string(), planned[*k].clone());
        }
        let mut body = to_api(self.0.fields, &Json::Object(only));
        for fd in self.0.fields.iter().filter(|f| changed.contains(&f.attr)) {
            if planned[fd.attr].is_null() {
                strata_rest::fields::set(&mut body, fd.api, Json::Null);
            }
        }
        if changed.contains(&"description") && planned["description"].is_null() {
            body["description"] = tags_desc.cloned().unwrap_or(Json::Null);
        }
        body
    }
}

#[async_trait]
impl Kind<Ctx> for Compute {
    fn schema(&self) -> ResourceSchema {
        (self.0.schema)()
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = strata_provider::plan_by_schema(schema, req.prior, req.config);
        let (Some(prior), true) = (req.prior, self.0.type_name == SUBNETWORK.type_name) else {
            return p;
        };
        // A primary range may only grow; anything else is a new subnetwork.
        let range = |v: &Value| {
            strata_provider::values::string(v, "ip_cidr_range")
                .and_then(|s| s.parse::<ipnet::IpNet>().ok())
        };
        if let (Some(old), Some(new)) = (range(prior), range(&p.planned)) {
            if old != new && !new.contains(&old) {
                p.requires_replace.push(vec!["ip_cidr_range".into()]);
            }
        }
        p
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        // One list call per project and region, not one GET per object.
        let mut listed: BTreeMap<String, BTreeMap<String, Json>> = BTreeMap::new();
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let j = tf(o);
            let p = self.place(c, &j)?;
            let scope = p.scope();
            if !listed.contains_key(&scope) {
                let items = c
                    .rest
                    .list(
                        &format!("list {}", self.0.collection),
                        &self.collection_url(c, &p),
                        "items",
                    )
                    .await?;
                let by_name = items
                    .into_iter()
                    .filter_map(|i| Some((i["name"].as_str()?.to_string(), i)))
                    .collect();
                listed.insert(scope.clone(), by_name);
            }
            out.push(match listed[&scope].get(&p.name) {
                Some(found) => Some(self.value(&p, found, Some(&j))?),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Ctx, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        let j = tf(planned);
        let p = self.place(c, &j)?;
        let mut body = to_api(self.0.fields, &j);
        if j["description"].is_null() {
            body["description"] = json!(marker(tags));
        }
        // A retried insert with the same request id is the same insert.
        let url = format!(
            "{}?requestId={}",
            self.collection_url(c, &p),
            uuid::Uuid::new_v4()
        );
        let op_name = format!("insert {}", self.0.type_name);
        match c.rest.send(Method::POST, &url, Some(&body)).await {
            Ok(r) => {
                self.wait(c, "insert", &r.body, timeout(planned, "create", TIMEOUT))
                    .await?
            }
            Err(e) if e.status == 409 => {
                // Ours already (a crashed run's insert) when it carries our
                // mark; anyone else's is not taken over.
                let existing = self.get(c, &p).await?;
                let ours = existing
                    .as_ref()
                    .is_some_and(|o| o["description"].as_str() == Some(marker(tags).as_str()));
                if !ours {
                    let id = format!("{}/{}/{}", p.scope(), self.0.collection, p.name);
                    let what = format!("{} {}", self.0.collection.trim_end_matches('s'), p.name);
                    return Err(strata_rest::not_ours(&op_name, &what, &id));
                }
            }
            Err(e) => return Err(c.rest.driver_error(&op_name, &e)),
        }
        let created = self.get(c, &p).await?.ok_or_else(|| DriverError::Api {
            operation: op_name,
            detail: "the object was not there after its insert finished".into(),
            retryable: true,
        })?;
        self.value(&p, &created, Some(&j))
    }

    async fn update(&self, c: &Ctx, prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let (old, new) = (tf(prior), tf(planned));
        let p = self.place(c, &new)?;
        let t = timeout(planned, "update", TIMEOUT);
        let current = self.get(c, &p).await?;
        let kept_marker = current
            .as_ref()
            .map(|o| o["description"].clone())
            .filter(|d| d.as_str().is_some_and(is_marker));
        if self.0.type_name == SUBNETWORK.type_name {
            let url = self.item_url(c, &p);
            if old["ip_cidr_range"] != new["ip_cidr_range"] {
                let op = c
                    .rest
                    .call(
                        "expandIpCidrRange",
                        Method::POST,
                        &format!("{url}/expandIpCidrRange"),
                        Some(&json!({"ipCidrRange": new["ip_cidr_range"]})),
                    )
                    .await?;
                self.wait(c, "expand", &op.body, t).await?;
            }
            if old["private_ip_google_access"] != new["private_ip_google_access"]
                && !new["private_ip_google_access"].is_null()
            {
                let op = c
                    .rest
                    .call(
                        "setPrivateIpGoogleAccess",
                        Method::POST,
                        &format!("{url}/setPrivateIpGoogleAccess"),
                        Some(&json!({"privateIpGoogleAccess": new["private_ip_google_access"]})),
                    )
                    .await?;
                self.wait(c, "update", &op.body, t).await?;
            }
            let mut o2 = old.clone();
            o2["ip_cidr_range"] = new["ip_cidr_range"].clone();
            o2["private_ip_google_access"] = new["private_ip_google_access"].clone();
            let mut body = self.patch_body(&o2, &new, kept_marker.as_ref());
            if body.as_object().is_some_and(|b| !b.is_empty()) {
                // Subnetwork patches are checked against the current fingerprint.
                let fresh = self.get(c, &p).await?.unwrap_or_default();
                body["fingerprint"] = fresh["fingerprint"].clone();
                let op = c
                    .rest
                    .call("patch subnetwork", Method::PATCH, &url, Some(&body))
                    .await?;
                self.wait(c, "patch", &op.body, t).await?;
            }
        } else {
            let body = self.patch_body(&old, &new, kept_marker.as_ref());
            if body.as_object().is_some_and(|b| !b.is_empty()) {
                let op = c
                    .rest
                    .call(
                        &format!("patch {}", self.0.type_name),
                        Method::PATCH,
                        &self.item_url(c, &p),
                        Some(&body),
                    )
                    .await?;
                self.wait(c, "patch", &op.body, t).await?;
            }
        }
        let now = self.get(c, &p).await?.unwrap_or_default();
        self.value(&p, &now, Some(&new))
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let j = tf(prior);
        let p = self.place(c, &j)?;
        match c
            .rest
            .send(Method::DELETE, &self.item_url(c, &p), None)
            .await
        {
            Ok(r) => {
                self.wait(c, "delete", &r.body, timeout(prior, "delete", TIMEOUT))
                    .await
            }
            Err(e) if e.status == 404 => Ok(()),
            Err(e) => Err(c
                .rest
                .driver_error(&format!("delete {}", self.0.type_name), &e)),
        }
    }

    /// Global types list their collection; regional ones one aggregated
    /// list across every region.
    async fn find_tagged(&self, c: &Ctx, tags: &Tags) -> Result<Vec<Value>, DriverError> {
        let Ok(project) = c.project(&Json::Null, self.0.type_name) else {
            return Ok(Vec::new());
        };
        let coll = self.0.collection;
        let items = if self.0.regional {
            let url = format!(
                "{}projects/{project}/aggregated/{coll}",
                c.endpoints.compute
            );
            let each_region = |page: &Json| -> Vec<Json> {
                page["items"]
                    .as_object()
                    .into_iter()
                    .flat_map(|m| m.values())
                    .filter_map(|scoped| scoped[coll].as_array())
                    .flatten()
                    .cloned()
                    .collect()
            };
            c.rest
                .list_with(&format!("list {coll}"), &url, each_region)
                .await?
                .unwrap_or_default()
        } else {
            let url = format!("{}projects/{project}/global/{coll}", c.endpoints.compute);
            c.rest.list(&format!("list {coll}"), &url, "items").await?
        };
        let mark = marker(tags);
        items
            .iter()
            .filter(|o| o["description"].as_str() == Some(mark.as_str()))
            .map(|o| {
                let found = Place {
                    project: project.clone(),
                    region: o["region"].as_str().map(|r| last(r).to_string()),
                    name: o["name"].as_str().unwrap_or_default().to_string(),
                };
                self.value(&found, o, None)
            })
            .collect()
    }

    /// Imported by `projects/P/global/networks/N` (or `.../regions/R/...`),
    /// or by name with the provider's project and region.
    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        let parts: Vec<&str> = id.split('/').collect();
        let j = match parts.as_slice() {
            ["projects", p, "global", _, n] => json!({"project": p, "name": n}),
            ["projects", p, "regions", r, _, n] => json!({"project": p, "region": r, "name": n}),
            [n] => json!({"name": n}),
            _ => {
                return Err(api::invalid(
                    self.0.type_name,
                    format!(
                        "import id {id:?} must be a name or projects/PROJECT/.../{}/NAME",
                        self.0.collection
                    ),
                ))
            }
        };
        let p = self.place(c, &j)?;
        match self.get(c, &p).await? {
            Some(o) => Ok(Some(self.value(&p, &o, None)?)),
            None => Ok(None),
        }
    }
}

/// `google_compute_router_nat`: a Cloud NAT, an entry of its router's
/// `nats` list changed by patching the router. Writes to one router are
/// made one at a time, so two NATs on a router cannot lose each other.
pub struct RouterNat;

const NAT: &[Field] = &[
    f("name", "name"),
    f("nat_ip_allocate_option", "natIpAllocateOption"),
    f(
        "source_subnetwork_ip_ranges_to_nat",
        "sourceSubnetworkIpRangesToNat",
    ),
    f("nat_ips", "natIps"),
    f("min_ports_per_vm", "minPortsPerVm"),
    object(
        "log_config",
        "logConfig",
        &[f("enable", "enable"), f("filter", "filter")],
    ),
    array(
        "subnetwork",
        "subnetworks",
        &[
            f("name", "name"),
            f("source_ip_ranges_to_nat", "sourceIpRangesToNat"),
        ],
    ),
];

impl RouterNat {
    const TYPE: &'static str = "google_compute_router_nat";

    fn router(c: &Ctx, j: &Json) -> Result<(Place, String), DriverError> {
        let p = Place {
            project: c.project(j, Self::TYPE)?,
            region: Some(c.region(j, Self::TYPE)?),
            name: last(&api::required(j, Self::TYPE, "router")?).to_string(),
        };
        let url = format!("{}{}/routers/{}", c.endpoints.compute, p.scope(), p.name);
        Ok((p, url))
    }

    fn value(p: &Place, nat: &Json, like: &Json) -> Result<Value, DriverError> {
        let mut j = strata_rest::fields::from_api(NAT, nat);
        j["project"] = json!(p.project);
        j["region"] = json!(p.region);
        j["router"] = like["router"].clone();
        j["id"] = json!(format!(
            "{}/{}/{}/{}",
            p.project,
            p.region.as_deref().unwrap_or_default(),
            p.name,
            nat["name"].as_str().unwrap_or_default()
        ));
        carry(&mut j, like, &["timeouts"]);
        api::value(&RouterNat.schema(), Self::TYPE, &j)
    }

    /// Reads the router, changes its NAT list with `edit`, and patches it
    /// back; returns the NAT named `name` afterwards.
    async fn edit(
        c: &Ctx,
        j: &Json,
        t: Duration,
        edit: impl FnOnce(&mut Vec<Json>) -> bool,
    ) -> Result<Option<Json>, DriverError> {
        let (_, url) = Self::router(c, j)?;
        let lock = c.lock(&url);
        let _held = lock.lock().await;
        let router = c
            .rest
            .get("GET router", &url)
            .await?
            .ok_or_else(|| DriverError::Api {
                operation: "edit router NAT".into(),
                detail: format!("router {} does not exist", j["router"]),
                retryable: false,
            })?;
        let mut nats = router["nats"].as_array().cloned().unwrap_or_default();
        if edit(&mut nats) {
            let op = c
                .rest
                .call(
                    "patch router",
                    Method::PATCH,
                    &url,
                    Some(&json!({ "nats": nats })),
                )
                .await?;
            compute_op(c, "patch google_compute_router", &op.body, t).await?;
        }
        let name = j["name"].as_str().unwrap_or_default();
        let after = c.rest.get("GET router", &url).await?.unwrap_or_default();
        Ok(after["nats"]
            .as_array()
            .and_then(|a| a.iter().find(|n| n["name"] == name).cloned()))
    }
}

#[async_trait]
impl Kind<Ctx> for RouterNat {
    fn schema(&self) -> ResourceSchema {
        let mut s = ResourceSchema::of_attributes(vec![
            ("name", A::required(Type::String, "The NAT's name.").force_new()),
            ("router", A::required(Type::String, "The router it belongs to.").force_new()),
            ("region", A::optional(Type::String, "The region (else the provider's).").and_computed().force_new()),
            ("project", project()),
            (
                "nat_ip_allocate_option",
                A::required(Type::String, "AUTO_ONLY or MANUAL_ONLY."),
            ),
            (
                "source_subnetwork_ip_ranges_to_nat",
                A::required(Type::String, "ALL_SUBNETWORKS_ALL_IP_RANGES, ALL_SUBNETWORKS_ALL_PRIMARY_IP_RANGES or LIST_OF_SUBNETWORKS."),
            ),
            ("nat_ips", A::optional(Type::set(Type::String), "Addresses for MANUAL_ONLY.")),
            ("min_ports_per_vm", A::optional(Type::Number, "Ports per VM.").and_computed()),
            ("id", A::computed(Type::String, "{project}/{region}/{router}/{name}.")),
        ]);
        s.blocks.insert(
            "log_config".into(),
            list_block_max1(vec![
                ("enable", A::required(Type::Bool, "Whether to log.")),
                (
                    "filter",
                    A::required(Type::String, "ERRORS_ONLY, TRANSLATIONS_ONLY or ALL."),
                ),
            ]),
        );
        s.blocks.insert(
            "subnetwork".into(),
            block(
                BlockNesting::Set,
                0,
                vec![
                    (
                        "name",
                        A::required(Type::String, "The subnetwork's self link."),
                    ),
                    (
                        "source_ip_ranges_to_nat",
                        A::required(Type::set(Type::String), "Which of its ranges to translate."),
                    ),
                ],
            ),
        );
        s.blocks.insert("timeouts".into(), timeouts());
        s
    }

    async fn read(&self, c: &Ctx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        // One GET per router, however many NATs it holds.
        let mut routers: BTreeMap<String, Option<Json>> = BTreeMap::new();
        let mut out = Vec::with_capacity(objs.len());
        for o in objs {
            let j = tf(o);
            let (p, url) = Self::router(c, &j)?;
            if !routers.contains_key(&url) {
                let r = c.rest.get("GET router", &url).await?;
                routers.insert(url.clone(), r);
            }
            let nat = routers[&url].as_ref().and_then(|r| {
                r["nats"]
                    .as_array()
                    .and_then(|a| a.iter().find(|n| n["name"] == j["name"]).cloned())
            });
            out.push(match nat {
                Some(n) => Some(Self::value(&p, &n, &j)?),
                None => None,
            });
        }
        Ok(out)
    }

    /// Adopts a NAT of the same name already in the router: a crashed run's.
    async fn create(&self, c: &Ctx, planned: &Value, _tags: &Tags) -> Result<Value, DriverError> {
        let j = tf(planned);
        let nat = to_api(NAT, &j);
        let name = j["name"].clone();
        let got = Self::edit(c, &j, timeout(planned, "create", TIMEOUT), |nats| {
            if nats.iter().any(|n| n["name"] == name) {
                return false;
            }
            nats.push(nat);
            true
        })
        .await?;
        let (p, _) = Self::router(c, &j)?;
        let got = got.ok_or_else(|| DriverError::Api {
            operation: "create google_compute_router_nat".into(),
            detail: "the NAT was not in the router after the patch".into(),
            retryable: true,
        })?;
        Self::value(&p, &got, &j)
    }

    async fn update(&self, c: &Ctx, _prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        let j = tf(planned);
        let nat = to_api(NAT, &j);
        let name = j["name"].clone();
        let got = Self::edit(c, &j, timeout(planned, "update", TIMEOUT), |nats| {
            for n in nats.iter_mut() {
                if n["name"] == name {
                    *n = nat.clone();
                }
            }
            true
        })
        .await?;
        let (p, _) = Self::router(c, &j)?;
        Self::value(&p, &got.unwrap_or_default(), &j)
    }

    async fn delete(&self, c: &Ctx, prior: &Value) -> Result<(), DriverError> {
        let j = tf(prior);
        let name = j["name"].clone();
        let (_, url) = Self::router(c, &j)?;
        if c.rest.get("GET router", &url).await?.is_none() {
            return Ok(());
        }
        Self::edit(c, &j, timeout(prior, "delete", TIMEOUT), |nats| {
            let before = nats.len();
            nats.retain(|n| n["name"] != name);
            nats.len() != before
        })
        .await
        .map(|_| ())
    }

    async fn find_tagged(&self, _c: &Ctx, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }

    /// Imported by `PROJECT/REGION/ROUTER/NAME`.
    async fn import(&self, c: &Ctx, id: &str) -> Result<Option<Value>, DriverError> {
        let parts: Vec<&str> = id.split('/').collect();
        let [project, region, router, name] = parts.as_slice() else {
            return Err(api::invalid(
                Self::TYPE,
                format!("import id {id:?} must be PROJECT/REGION/ROUTER/NAME"),
            ));
        };
        let j = json!({"project": project, "region": region, "router": router, "name": name});
        Ok(self
            .read(c, &[api::value(&self.schema(), Self::TYPE, &j)?])
            .await?
            .pop()
            .flatten())
    }
}
