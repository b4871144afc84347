//! `aws_security_group` (with inline `ingress` / `egress` rules, written as
//! blocks, an attribute as in the AWS provider) and the
//! one-rule-per-resource `aws_vpc_security_group_ingress_rule` /
//! `aws_vpc_security_group_egress_rule`.

use super::{arn, created, described, schema, tag_spec, unmanaged_when_empty, Ec2Type, Select};
use crate::error::{api, code, deleted};
use crate::tags;
use crate::values::{
    boolean, generated_name, get, number, object, required, str_value, string, string_list,
    strings, timeouts_of,
};
use crate::wait::{timeout, until, Poll};
use crate::Clients;
use async_trait::async_trait;
use aws_sdk_ec2::types::{
    IpPermission, IpRange, Ipv6Range, PrefixListId, ResourceType, SecurityGroupRuleRequest,
    SecurityGroupRuleUpdate, UserIdGroupPair,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

const DIRECTIONS: [&str; 2] = ["ingress", "egress"];

/// The AWS provider's default for a group's description.
const DEFAULT_DESCRIPTION: &str = "Managed by Terraform";

/// Protocol names AWS answers with for numbers and aliases one may write.
fn protocol(p: &str) -> String {
    match p {
        "all" | "-1" => "-1",
        "6" => "tcp",
        "17" => "udp",
        "1" => "icmp",
        "58" => "icmpv6",
        other => other,
    }
    .to_string()
}

/// One inline rule, in the form both the plan and a read produce: lists
/// sorted, absent ones empty, ports 0 for "all protocols" (as Terraform's
/// configurations write it), so a rule AWS holds compares equal to the
/// block that made it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
struct Rule {
    protocol: String,
    from_port: i64,
    to_port: i64,
    description: String,
    cidr_blocks: BTreeSet<String>,
    ipv6_cidr_blocks: BTreeSet<String>,
    prefix_list_ids: BTreeSet<String>,
    security_groups: BTreeSet<String>,
    self_: bool,
}

impl Rule {
    fn from_value(v: &Value) -> Option<Rule> {
        let protocol = protocol(&string(v, "protocol")?);
        let all = protocol == "-1";
        let set = |name| strings(v, name).into_iter().collect::<BTreeSet<_>>();
        Some(Rule {
            from_port: if all { 0 } else { number(v, "from_port")? },
            to_port: if all { 0 } else { number(v, "to_port")? },
            protocol,
            description: string(v, "description").unwrap_or_default(),
            cidr_blocks: set("cidr_blocks"),
            ipv6_cidr_blocks: set("ipv6_cidr_blocks"),
            prefix_list_ids: set("prefix_list_ids"),
            security_groups: set("security_groups"),
            self_: boolean(v, "self").unwrap_or(false),
        })
    }

    fn value(&self) -> Value {
        let list = |s: &BTreeSet<String>| string_list(&s.iter().cloned().collect::<Vec<_>>());
        object(vec![
            ("protocol", Value::string(&self.protocol)),
            ("from_port", Value::int(self.from_port)),
            ("to_port", Value::int(self.to_port)),
            ("description", Value::string(&self.description)),
            ("cidr_blocks", list(&self.cidr_blocks)),
            ("ipv6_cidr_blocks", list(&self.ipv6_cidr_blocks)),
            ("prefix_list_ids", list(&self.prefix_list_ids)),
            (
                "security_groups",
                Value::new_set(
                    Type::String,
                    self.security_groups.iter().map(Value::string).collect(),
                ),
            ),
            ("self", Value::Bool(self.self_)),
        ])
    }

    /// The rule as the permission EC2's Authorize and Revoke calls take.
    fn permission(&self, group: &str) -> IpPermission {
        let desc = (!self.description.is_empty()).then(|| self.description.clone());
        let all = self.protocol == "-1";
        let mut pairs: Vec<UserIdGroupPair> = self
            .security_groups
            .iter()
            .map(|g| {
                UserIdGroupPair::builder()
                    .group_id(g)
                    .set_description(desc.clone())
                    .build()
            })
            .collect();
        if self.self_ {
            pairs.push(
                UserIdGroupPair::builder()
                    .group_id(group)
                    .set_description(desc.clone())
                    .build(),
            );
        }
        IpPermission::builder()
            .ip_protocol(&self.protocol)
            .set_from_port((!all).then_some(self.from_port as i32))
            .set_to_port((!all).then_some(self.to_port as i32))
            .set_ip_ranges(Some(
                self.cidr_blocks
                    .iter()
                    .map(|c| {
                        IpRange::builder()
                            .cidr_ip(c)
                            .set_description(desc.clone())
                            .build()
                    })
                    .collect(),
            ))
            .set_ipv6_ranges(Some(
                self.ipv6_cidr_blocks
                    .iter()
                    .map(|c| {
                        Ipv6Range::builder()
                            .cidr_ipv6(c)
                            .set_description(desc.clone())
                            .build()
                    })
                    .collect(),
            ))
            .set_prefix_list_ids(Some(
                self.prefix_list_ids
                    .iter()
                    .map(|p| {
                        PrefixListId::builder()
                            .prefix_list_id(p)
                            .set_description(desc.clone())
                            .build()
                    })
                    .collect(),
            ))
            .set_user_id_group_pairs(Some(pairs))
            .build()
    }
}

type RuleKey = (String, i64, i64, String);

/// The rule for a protocol, ports and description, made on first use.
fn entry(by: &mut BTreeMap<RuleKey, Rule>, k: RuleKey) -> &mut Rule {
    by.entry(k.clone()).or_insert_with(|| Rule {
        protocol: k.0,
        from_port: k.1,
        to_port: k.2,
        description: k.3,
        ..Rule::default()
    })
}

/// The rules AWS holds, regrouped the way configurations write them: AWS
/// merges every source with the same protocol and ports into one
/// permission, so they are split again by description.
fn rules_of(group: &str, perms: &[IpPermission]) -> Vec<Rule> {
    let mut by: BTreeMap<RuleKey, Rule> = BTreeMap::new();
    for p in perms {
        let protocol = protocol(p.ip_protocol().unwrap_or("-1"));
        let (from, to) = if protocol == "-1" {
            (0, 0)
        } else {
            (
                p.from_port().unwrap_or(0) as i64,
                p.to_port().unwrap_or(0) as i64,
            )
        };
        let key = |desc: Option<&str>| (protocol.clone(), from, to, desc.unwrap_or("").to_string());
        for r in p.ip_ranges() {
            if let Some(c) = r.cidr_ip() {
                entry(&mut by, key(r.description()))
                    .cidr_blocks
                    .insert(c.into());
            }
        }
        for r in p.ipv6_ranges() {
            if let Some(c) = r.cidr_ipv6() {
                entry(&mut by, key(r.description()))
                    .ipv6_cidr_blocks
                    .insert(c.into());
            }
        }
        for r in p.prefix_list_ids() {
            if let Some(id) = r.prefix_list_id() {
                entry(&mut by, key(r.description()))
                    .prefix_list_ids
                    .insert(id.into());
            }
        }
        for r in p.user_id_group_pairs() {
            if let Some(g) = r.group_id() {
                let e = entry(&mut by, key(r.description()));
                if g == group {
                    e.self_ = true;
                } else {
                    e.security_groups.insert(g.into());
                }
            }
        }
    }
    by.into_values().collect()
}

/// The configured or recorded rules of one direction.
fn rules(v: &Value, direction: &str) -> BTreeSet<Rule> {
    get(v, direction)
        .and_then(|s| s.unmarked().elements().map(<[Value]>::to_vec))
        .unwrap_or_default()
        .iter()
        .filter_map(Rule::from_value)
        .collect()
}

pub struct SecurityGroup;

impl SecurityGroup {
    async fn authorize(
        &self,
        c: &Clients,
        id: &str,
        direction: &str,
        rules: &[&Rule],
    ) -> Result<(), DriverError> {
        if rules.is_empty() {
            return Ok(());
        }
        let perms = rules.iter().map(|r| r.permission(id)).collect();
        if direction == "ingress" {
            c.ec2
                .authorize_security_group_ingress()
                .group_id(id)
                .set_ip_permissions(Some(perms))
                .send()
                .await
                .map_err(|e| api("AuthorizeSecurityGroupIngress", e))?;
        } else {
            c.ec2
                .authorize_security_group_egress()
                .group_id(id)
                .set_ip_permissions(Some(perms))
                .send()
                .await
                .map_err(|e| api("AuthorizeSecurityGroupEgress", e))?;
        }
        Ok(())
    }

    async fn revoke(
        &self,
        c: &Clients,
        id: &str,
        direction: &str,
        rules: &[&Rule],
    ) -> Result<(), DriverError> {
        if rules.is_empty() {
            return Ok(());
        }
        let perms: Vec<IpPermission> = rules.iter().map(|r| r.permission(id)).collect();
        if direction == "ingress" {
            deleted(
                "RevokeSecurityGroupIngress",
                c.ec2
                    .revoke_security_group_ingress()
                    .group_id(id)
                    .set_ip_permissions(Some(perms))
                    .send()
                    .await,
            )?;
        } else {
            deleted(
                "RevokeSecurityGroupEgress",
                c.ec2
                    .revoke_security_group_egress()
                    .group_id(id)
                    .set_ip_permissions(Some(perms))
                    .send()
                    .await,
            )?;
        }
        Ok(())
    }
}

/// One inline rule, as the provider types it.
fn rule_type() -> Type {
    let list = || Type::list(Type::String);
    Type::object(BTreeMap::from([
        ("from_port".to_string(), Type::Number),
        ("to_port".to_string(), Type::Number),
        ("protocol".to_string(), Type::String),
        ("cidr_blocks".to_string(), list()),
        ("ipv6_cidr_blocks".to_string(), list()),
        ("prefix_list_ids".to_string(), list()),
        ("security_groups".to_string(), Type::set(Type::String)),
        ("self".to_string(), Type::Bool),
        ("description".to_string(), Type::String),
    ]))
}

/// The rules' required arguments, which an attribute written as blocks
/// cannot declare: a rule without one would be dropped, not made.
fn missing_arguments(config: &Value) -> Vec<strata_provider::Problem> {
    use strata_provider::Problem;
    let mut out = Vec::new();
    for d in DIRECTIONS {
        let rules = get(config, d).and_then(|v| v.elements().map(<[Value]>::to_vec));
        for (i, rule) in rules.unwrap_or_default().iter().enumerate() {
            for name in ["from_port", "to_port", "protocol"] {
                if get(rule, name).is_none_or(Value::is_null) {
                    out.push(Problem {
                        error: true,
                        summary: "Missing required argument".into(),
                        // The provider's words, at the resource as it
                        // points.
                        detail: format!(
                            "The argument \"{d}.{i}.{name}\" is required, but no definition was found."
                        ),
                        path: Vec::new(),
                    });
                }
            }
        }
    }
    out
}

#[async_trait]
impl Ec2Type for SecurityGroup {
    const TYPE: &'static str = "aws_security_group";
    const VERSION: u64 = 1;
    const CONFIG_ONLY: &'static [&'static str] = &["name_prefix", "revoke_rules_on_delete"];

    fn schema(&self) -> ResourceSchema {
        let mut s = schema(vec![
            (
                "name",
                A::optional(Type::String, "The group's name (unique in its VPC).")
                    .and_computed()
                    .force_new(),
            ),
            (
                "name_prefix",
                A::optional(Type::String, "A prefix for a generated name.").force_new(),
            ),
            (
                "description",
                A::optional(Type::String, "What the group is for.").force_new(),
            ),
            (
                "vpc_id",
                A::optional(Type::String, "The VPC.")
                    .and_computed()
                    .force_new(),
            ),
            (
                "revoke_rules_on_delete",
                A::optional(Type::Bool, "Revoke every rule before deleting."),
            ),
        ]);
        // The provider's: a set of rules as an attribute (written as
        // blocks), left to AWS when the configuration has none.
        for d in DIRECTIONS {
            let rules = A::optional(Type::set(rule_type()), "Rules in this direction.");
            s.attributes.insert(d.into(), rules.and_computed());
        }
        // The provider has no update timeout for a group.
        s.blocks
            .insert("timeouts".into(), timeouts_of(&["create", "delete"]));
        s
    }

    fn validate(&self, config: &Value) -> Vec<strata_provider::Problem> {
        missing_arguments(config)
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        // The provider's default description, so a group strata makes is
        // one the provider plans nothing for (a description cannot change
        // in place). A group an older strata made keeps its own.
        let described = req
            .prior
            .and_then(|p| string(p, "description"))
            .filter(|_| string(req.config, "description").is_none());
        let description = described.unwrap_or_else(|| DEFAULT_DESCRIPTION.to_string());
        let mut p = tags::plan_taggable(
            schema,
            req,
            &[
                ("description", Value::string(&description)),
                ("revoke_rules_on_delete", Value::Bool(false)),
            ],
        );
        for d in DIRECTIONS {
            // Rules in their normal form, so AWS's regrouping never shows.
            if let Value::Object(m) = &mut p.planned {
                if let Some(v) = m.get(d).filter(|v| v.is_known()) {
                    let elements = v.elements().map(<[Value]>::to_vec).unwrap_or_default();
                    if elements.iter().all(Value::is_wholly_known) {
                        let rs: BTreeSet<Rule> =
                            elements.iter().filter_map(Rule::from_value).collect();
                        let set = Value::new_set(rule_type(), rs.iter().map(Rule::value).collect());
                        m.insert(d.into(), set);
                    }
                }
            }
            unmanaged_when_empty(schema, &mut p.planned, req.prior, d);
        }
        p
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_security_groups()
            .set_filters(Some(select.filters("group-id")))
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("DescribeSecurityGroups", e))?;
        let rule = rule_type();
        let mut found = HashMap::new();
        for (id, g) in select.keep(&out, |g| g.group_id(), |g| g.tags()) {
            let set = |perms: &[IpPermission]| {
                Value::new_set(
                    rule.clone(),
                    rules_of(id, perms).iter().map(Rule::value).collect(),
                )
            };
            let name = g.group_name().unwrap_or_default();
            found.insert(
                id.to_string(),
                described(
                    id,
                    arn(c, g.owner_id(), "security-group", id).await?,
                    g.owner_id(),
                    g.tags(),
                    vec![
                        ("name", Value::string(name)),
                        ("description", str_value(g.description())),
                        ("vpc_id", str_value(g.vpc_id())),
                        ("ingress", set(g.ip_permissions())),
                        ("egress", set(g.ip_permissions_egress())),
                    ],
                ),
            );
        }
        Ok(found)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<String, DriverError> {
        let name = match (string(planned, "name"), string(planned, "name_prefix")) {
            (Some(n), _) => n,
            (None, Some(p)) => generated_name(&p),
            (None, None) => generated_name("strata-"),
        };
        let out = c
            .ec2
            .create_security_group()
            .group_name(&name)
            .description(
                string(planned, "description").unwrap_or_else(|| DEFAULT_DESCRIPTION.into()),
            )
            .set_vpc_id(string(planned, "vpc_id"))
            .tag_specifications(tag_spec(ResourceType::SecurityGroup, planned, t))
            .send()
            .await
            .map_err(|e| api("CreateSecurityGroup", e))?;
        let id = created("CreateSecurityGroup", out.group_id())?;
        // As Terraform does, the allow-all egress rule AWS adds to every
        // new group goes: egress is what the configuration says.
        let all = Rule {
            protocol: "-1".into(),
            cidr_blocks: BTreeSet::from(["0.0.0.0/0".to_string()]),
            ..Rule::default()
        };
        self.revoke(c, &id, "egress", &[&all]).await?;
        for d in DIRECTIONS {
            let want = rules(planned, d);
            self.authorize(c, &id, d, &want.iter().collect::<Vec<_>>())
                .await?;
        }
        Ok(id)
    }

    async fn update(
        &self,
        c: &Clients,
        id: &str,
        prior: &Value,
        planned: &Value,
    ) -> Result<Option<String>, DriverError> {
        for d in DIRECTIONS {
            let (had, want) = (rules(prior, d), rules(planned, d));
            let gone: Vec<&Rule> = had.difference(&want).collect();
            let new: Vec<&Rule> = want.difference(&had).collect();
            self.revoke(c, id, d, &gone).await?;
            self.authorize(c, id, d, &new).await?;
        }
        Ok(None)
    }

    async fn delete(&self, c: &Clients, id: &str, prior: &Value) -> Result<(), DriverError> {
        if boolean(prior, "revoke_rules_on_delete") == Some(true) {
            for d in DIRECTIONS {
                let had = rules(prior, d);
                self.revoke(c, id, d, &had.iter().collect::<Vec<_>>())
                    .await?;
            }
        }
        // Network interfaces of a cluster that was just deleted can hold
        // the group for minutes; as Terraform does, keep trying until the
        // delete timeout.
        let limit = timeout(prior, "delete", Duration::from_secs(15 * 60));
        let attempt = || async {
            match c.ec2.delete_security_group().group_id(id).send().await {
                Err(e) if code(&e) == Some("DependencyViolation") => Ok(Poll::Pending(format!(
                    "in use ({})",
                    api("DeleteSecurityGroup", e)
                ))),
                r => deleted("DeleteSecurityGroup", r).map(|_| Poll::Gone),
            }
        };
        until(
            &format!("deleting security group {id}"),
            limit,
            (Duration::from_secs(2), Duration::from_secs(30)),
            attempt,
            |p| matches!(p, Poll::Gone),
        )
        .await
        .map(|_| ())
    }
}

/// `aws_vpc_security_group_ingress_rule` (`EGRESS = false`) and
/// `aws_vpc_security_group_egress_rule`: one rule each, with its own id
/// and tags, which AWS can change in place.
pub struct SecurityGroupRule<const EGRESS: bool>;

impl<const EGRESS: bool> SecurityGroupRule<EGRESS> {
    fn request(v: &Value) -> SecurityGroupRuleRequest {
        let proto = protocol(&string(v, "ip_protocol").unwrap_or_else(|| "-1".into()));
        let all = proto == "-1";
        SecurityGroupRuleRequest::builder()
            .ip_protocol(&proto)
            .set_from_port(number(v, "from_port").filter(|_| !all).map(|n| n as i32))
            .set_to_port(number(v, "to_port").filter(|_| !all).map(|n| n as i32))
            .set_cidr_ipv4(string(v, "cidr_ipv4"))
            .set_cidr_ipv6(string(v, "cidr_ipv6"))
            .set_prefix_list_id(string(v, "prefix_list_id"))
            .set_referenced_group_id(string(v, "referenced_security_group_id"))
            .set_description(string(v, "description"))
            .build()
    }
}

#[async_trait]
impl<const EGRESS: bool> Ec2Type for SecurityGroupRule<EGRESS> {
    const TYPE: &'static str = if EGRESS {
        "aws_vpc_security_group_egress_rule"
    } else {
        "aws_vpc_security_group_ingress_rule"
    };

    fn schema(&self) -> ResourceSchema {
        let mut s = tags::taggable_schema(vec![
            (
                "security_group_id",
                A::required(Type::String, "The group the rule belongs to.").force_new(),
            ),
            (
                "ip_protocol",
                A::required(Type::String, "tcp, udp, icmp, or -1 for all."),
            ),
            ("from_port", A::optional(Type::Number, "First port.")),
            ("to_port", A::optional(Type::Number, "Last port.")),
            ("cidr_ipv4", A::optional(Type::String, "An IPv4 range.")),
            ("cidr_ipv6", A::optional(Type::String, "An IPv6 range.")),
            (
                "prefix_list_id",
                A::optional(Type::String, "A prefix list."),
            ),
            (
                "referenced_security_group_id",
                A::optional(Type::String, "Another security group."),
            ),
            (
                "description",
                A::optional(Type::String, "What the rule is for."),
            ),
            (
                "security_group_rule_id",
                A::computed(Type::String, "The rule's id (also the id)."),
            ),
        ]);
        s.attributes.remove("owner_id");
        s
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = tags::plan_taggable(schema, req, &[]);
        if let Value::Object(m) = &mut p.planned {
            if let Some(proto) = m.get("ip_protocol").and_then(|v| v.as_str()) {
                let proto = protocol(proto);
                m.insert("ip_protocol".into(), Value::string(proto));
            }
        }
        p
    }

    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError> {
        let out = c
            .ec2
            .describe_security_group_rules()
            .set_filters(Some(select.filters("security-group-rule-id")))
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(|e| api("DescribeSecurityGroupRules", e))?;
        let mut found = HashMap::new();
        let rules = &out;
        for (id, r) in select.keep(rules, |r| r.security_group_rule_id(), |r| r.tags()) {
            if r.is_egress() != Some(EGRESS) {
                continue;
            }
            let proto = protocol(r.ip_protocol().unwrap_or("-1"));
            // "All protocols" has no ports; AWS says -1 for them.
            let port = |p: Option<i32>| match p {
                Some(p) if proto != "-1" => Value::int(p as i64),
                _ => Value::Null(Type::Number),
            };
            // A rule belongs to its group's account, which AWS says
            // beside it: no GetCallerIdentity for a refresh of rules.
            let arn = arn(c, r.group_owner_id(), "security-group-rule", id).await?;
            let v = described(
                id,
                arn,
                None,
                r.tags(),
                vec![
                    ("security_group_id", str_value(r.group_id())),
                    ("ip_protocol", Value::string(&proto)),
                    ("from_port", port(r.from_port())),
                    ("to_port", port(r.to_port())),
                    ("cidr_ipv4", str_value(r.cidr_ipv4())),
                    ("cidr_ipv6", str_value(r.cidr_ipv6())),
                    ("prefix_list_id", str_value(r.prefix_list_id())),
                    (
                        "referenced_security_group_id",
                        str_value(r.referenced_group_info().and_then(|g| g.group_id())),
                    ),
                    ("description", str_value(r.description())),
                    ("security_group_rule_id", Value::string(id)),
                ],
            );
            found.insert(id.to_string(), v);
        }
        Ok(found)
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<String, DriverError> {
        let group = required(planned, Self::TYPE, "security_group_id")?;
        let req = Self::request(planned);
        let perm = IpPermission::builder()
            .set_ip_protocol(req.ip_protocol().map(str::to_string))
            .set_from_port(req.from_port())
            .set_to_port(req.to_port());
        let desc = req.description().map(str::to_string);
        let perm = match (req.cidr_ipv4(), req.cidr_ipv6(), req.prefix_list_id(), req.referenced_group_id()) {
            (Some(cidr), ..) => perm.ip_ranges(IpRange::builder().cidr_ip(cidr).set_description(desc).build()),
            (_, Some(cidr), ..) => perm.ipv6_ranges(Ipv6Range::builder().cidr_ipv6(cidr).set_description(desc).build()),
            (_, _, Some(pl), _) => perm.prefix_list_ids(PrefixListId::builder().prefix_list_id(pl).set_description(desc).build()),
            (_, _, _, Some(g)) => perm.user_id_group_pairs(UserIdGroupPair::builder().group_id(g).set_description(desc).build()),
            _ => {
                return Err(DriverError::InvalidConfig {
                    type_name: Self::TYPE.into(),
                    detail: "exactly one of cidr_ipv4, cidr_ipv6, prefix_list_id and referenced_security_group_id is required".into(),
                })
            }
        };
        let spec = tag_spec(ResourceType::SecurityGroupRule, planned, t);
        let rules = if EGRESS {
            c.ec2
                .authorize_security_group_egress()
                .group_id(&group)
                .ip_permissions(perm.build())
                .tag_specifications(spec)
                .send()
                .await
                .map_err(|e| api("AuthorizeSecurityGroupEgress", e))?
                .security_group_rules
        } else {
            c.ec2
                .authorize_security_group_ingress()
                .group_id(&group)
                .ip_permissions(perm.build())
                .tag_specifications(spec)
                .send()
                .await
                .map_err(|e| api("AuthorizeSecurityGroupIngress", e))?
                .security_group_rules
        };
        created(
            "AuthorizeSecurityGroupRule",
            rules
                .as_deref()
                .and_then(|r| r.first())
                .and_then(|r| r.security_group_rule_id()),
        )
    }

    async fn update(
        &self,
        c: &Clients,
        id: &str,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Option<String>, DriverError> {
        let group = required(planned, Self::TYPE, "security_group_id")?;
        c.ec2
            .modify_security_group_rules()
            .group_id(group)
            .security_group_rules(
                SecurityGroupRuleUpdate::builder()
                    .security_group_rule_id(id)
                    .security_group_rule(Self::request(planned))
                    .build(),
            )
            .send()
            .await
            .map_err(|e| api("ModifySecurityGroupRules", e))?;
        Ok(None)
    }

    async fn delete(&self, c: &Clients, id: &str, prior: &Value) -> Result<(), DriverError> {
        let group = required(prior, Self::TYPE, "security_group_id")?;
        let r = if EGRESS {
            deleted(
                "RevokeSecurityGroupEgress",
                c.ec2
                    .revoke_security_group_egress()
                    .group_id(group)
                    .security_group_rule_ids(id)
                    .send()
                    .await,
            )
        } else {
            deleted(
                "RevokeSecurityGroupIngress",
                c.ec2
                    .revoke_security_group_ingress()
                    .group_id(group)
                    .security_group_rule_ids(id)
                    .send()
                    .await,
            )
        };
        r.map(|_| ())
    }
}
