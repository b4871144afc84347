//! The network a cluster sits in: its resource group, virtual network,
//! subnets and security groups.

use super::{common, s, Scope, Spec};
use serde_json::json;
use strata_provider::values::block;
use strata_provider::{AttributeSchema as A, BlockNesting};
use strata_rest::fields::{array, f, out, Field};
use strata_value::types::Type;

pub static RESOURCE_GROUP: Spec = Spec {
    type_name: "azurerm_resource_group",
    provider: "",
    api_version: "2022-09-01",
    scope: Scope::Group,
    located: true,
    tags: Some("tags"),
    fields: &[],
    schema: || common(true, false, true, vec![]),
    nested_force_new: &[],
    keep: &[],
    to_api: None,
    from_api: None,
    credentials: None,
    settings: None,
    queues: &[],
};

pub static VIRTUAL_NETWORK: Spec = Spec {
    type_name: "azurerm_virtual_network",
    provider: "Microsoft.Network/virtualNetworks",
    api_version: "2024-05-01",
    scope: Scope::InGroup,
    located: true,
    tags: Some("tags"),
    fields: &[
        f("address_space", "properties.addressSpace.addressPrefixes"),
        f("dns_servers", "properties.dhcpOptions.dnsServers"),
        out("guid", "properties.resourceGuid"),
    ],
    schema: || {
        common(
            true,
            true,
            true,
            vec![
                (
                    "address_space",
                    A::required(Type::list(s()), "The network's address ranges."),
                ),
                (
                    "dns_servers",
                    A::optional(Type::list(s()), "DNS servers.").and_computed(),
                ),
                ("guid", A::computed(s(), "The network's GUID.")),
            ],
        )
    },
    nested_force_new: &[],
    keep: &["properties.subnets"],
    to_api: None,
    from_api: None,
    credentials: None,
    settings: None,
    queues: &[],
};

pub static SUBNET: Spec = Spec {
    type_name: "azurerm_subnet",
    provider: "Microsoft.Network/virtualNetworks",
    api_version: "2024-05-01",
    scope: Scope::UnderName {
        parent: "virtual_network_name",
        segment: "subnets",
    },
    located: false,
    tags: None,
    fields: &[
        f("address_prefixes", "properties.addressPrefixes"),
        f(
            "default_outbound_access_enabled",
            "properties.defaultOutboundAccess",
        ),
    ],
    schema: || {
        common(
            false,
            true,
            false,
            vec![
                (
                    "virtual_network_name",
                    A::required(s(), "The network it divides.").force_new(),
                ),
                (
                    "address_prefixes",
                    A::required(Type::list(s()), "Its address ranges."),
                ),
                (
                    "default_outbound_access_enabled",
                    A::optional(Type::Bool, "Default outbound internet access.").and_computed(),
                ),
            ],
        )
    },
    nested_force_new: &[],
    keep: &["properties.networkSecurityGroup"],
    to_api: None,
    // A subnet given one range (`addressPrefix`, as the portal and the
    // CLI write it, and as Microsoft's SubnetCreate example answers) has
    // no `addressPrefixes`: read either, or an imported subnet would
    // plan a change of a required attribute from nothing.
    from_api: Some(|api, tf| {
        if tf["address_prefixes"].is_null() {
            if let Some(one) = api["properties"]["addressPrefix"].as_str() {
                tf["address_prefixes"] = json!([one]);
            }
        }
    }),
    credentials: None,
    settings: None,
    queues: &[],
};

const RULE: &[Field] = &[
    f("name", "name"),
    f("priority", "properties.priority"),
    f("direction", "properties.direction"),
    f("access", "properties.access"),
    f("protocol", "properties.protocol"),
    f("source_port_range", "properties.sourcePortRange"),
    f("destination_port_range", "properties.destinationPortRange"),
    f("source_address_prefix", "properties.sourceAddressPrefix"),
    f(
        "destination_address_prefix",
        "properties.destinationAddressPrefix",
    ),
    f("description", "properties.description"),
];

pub static NETWORK_SECURITY_GROUP: Spec = Spec {
    type_name: "azurerm_network_security_group",
    provider: "Microsoft.Network/networkSecurityGroups",
    api_version: "2024-05-01",
    scope: Scope::InGroup,
    located: true,
    tags: Some("tags"),
    fields: &[array("security_rule", "properties.securityRules", RULE)],
    schema: || {
        let mut schema = common(true, true, true, vec![]);
        schema.blocks.insert(
            "security_rule".into(),
            block(
                BlockNesting::Set,
                0,
                vec![
                    ("name", A::required(s(), "The rule's name.")),
                    (
                        "priority",
                        A::required(Type::Number, "100-4096, lower first."),
                    ),
                    ("direction", A::required(s(), "Inbound or Outbound.")),
                    ("access", A::required(s(), "Allow or Deny.")),
                    ("protocol", A::required(s(), "Tcp, Udp, Icmp or *.")),
                    (
                        "source_port_range",
                        A::optional(s(), "A port, a range or *."),
                    ),
                    (
                        "destination_port_range",
                        A::optional(s(), "A port, a range or *."),
                    ),
                    (
                        "source_address_prefix",
                        A::optional(s(), "A CIDR, a service tag or *."),
                    ),
                    (
                        "destination_address_prefix",
                        A::optional(s(), "A CIDR, a service tag or *."),
                    ),
                    ("description", A::optional(s(), "A description.")),
                ],
            ),
        );
        schema
    },
    nested_force_new: &[],
    keep: &["properties.subnets"],
    to_api: None,
    from_api: None,
    credentials: None,
    settings: None,
    queues: &[],
};
