//! The clouds a cluster may run on: for each, the provider its `cloud`
//! block configures, which of the block's arguments configure it, and
//! the catalogs its pools are priced from.

use strata_provider::billing::Capacity;
use strata_provider::catalog::{Catalog, PriceList};

/// What one cloud needs: the drivers it configures and which of a `cloud`
/// block's attributes configure them (the rest are the module's inputs).
pub(super) struct CloudKind {
    pub(super) name: &'static str,
    /// The provider configured from the `cloud` block, and its arguments.
    pub(super) provider: (&'static str, &'static [&'static str]),
    /// The `cloud` block attribute naming the region the catalog is asked
    /// about (`None`: no catalog, the nodes exist already).
    pub(super) region: Option<&'static str>,
    /// The attribute listing several regions instead, the first the
    /// primary: each gets its own cluster, a place for failover to go.
    pub(super) regions: Option<&'static str>,
    /// Whether the cluster is reached through the module's `kubernetes`
    /// output (a cluster the module creates) rather than the `cloud` block.
    pub(super) created: bool,
    /// The zones the module spreads a region's nodes over (what a shortage
    /// of one zone can be worked around with); empty where pools are not
    /// zonal.
    pub(super) zones: fn(&str) -> Vec<String>,
    /// The label the cloud (or the module) puts on a pool's nodes, whose
    /// value is the pool's name: how a pool's GPUs are found.
    pub(super) pool_label: &'static str,
    /// A region as the catalogs and placement name it, from however the
    /// provider lets it be written (Azure takes `East US` for `eastus`).
    pub(super) region_form: fn(&str) -> String,
    /// The capacity types its pools can be made with (a placement's
    /// others are no candidates here).
    pub(super) capacities: &'static [Capacity],
}

const SPOT_AND_ON_DEMAND: &[Capacity] = &[Capacity::OnDemand, Capacity::Spot];

/// The cloud named `name`.
pub(super) fn kind(name: &str) -> Option<&'static CloudKind> {
    CLOUDS.iter().find(|k| k.name == name)
}

impl CloudKind {
    /// Whether its pools can be made with `capacity`.
    pub(super) fn offers(&self, capacity: Capacity) -> bool {
        self.capacities.contains(&capacity)
    }
}

fn as_written(region: &str) -> String {
    region.to_string()
}

/// Azure's short form of a location: `East US` → `eastus`.
fn azure_short(location: &str) -> String {
    location
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase()
}

pub(super) fn lettered(sep: &'static str) -> impl Fn(&str) -> Vec<String> {
    move |region| {
        ["a", "b", "c"]
            .iter()
            .map(|z| format!("{region}{sep}{z}"))
            .collect()
    }
}

pub(super) const CLOUDS: &[CloudKind] = &[
    CloudKind {
        name: "aws",
        provider: ("aws", &["region", "profile", "assume_role"]),
        region: Some("region"),
        regions: Some("regions"),
        created: true,
        zones: |r| lettered("")(r),
        pool_label: "eks.amazonaws.com/nodegroup",
        region_form: as_written,
        capacities: SPOT_AND_ON_DEMAND,
    },
    CloudKind {
        name: "gcp",
        provider: ("google", &["project", "region", "credentials"]),
        region: Some("region"),
        regions: Some("regions"),
        created: true,
        zones: |r| lettered("-")(r),
        pool_label: "cloud.google.com/gke-nodepool",
        region_form: as_written,
        // GKE's Dynamic Workload Scheduler: flex-start and queued
        // provisioning pools.
        capacities: &[
            Capacity::OnDemand,
            Capacity::Spot,
            Capacity::FlexStart,
            Capacity::Queued,
        ],
    },
    CloudKind {
        name: "azure",
        provider: ("azurerm", &["subscription_id", "tenant_id", "client_id"]),
        region: Some("location"),
        regions: Some("locations"),
        created: true,
        zones: |_| Vec::new(),
        pool_label: "agentpool",
        region_form: azure_short,
        capacities: SPOT_AND_ON_DEMAND,
    },
    CloudKind {
        name: "kubernetes",
        provider: (
            "kubernetes",
            &[
                "config_path",
                "config_context",
                "host",
                "cluster_ca_certificate",
                "token",
            ],
        ),
        region: None,
        regions: None,
        created: false,
        zones: |_| Vec::new(),
        pool_label: "strata.dev/pool",
        region_form: as_written,
        capacities: SPOT_AND_ON_DEMAND,
    },
];

/// What expansion prices pools with: each cloud driver's GPU catalog (by
/// provider name) and the user's prices over them.
pub struct Catalogs<'c> {
    pub by_provider: &'c dyn Fn(&str) -> Option<&'c Catalog>,
    /// The command's `--prices`; a cluster's own `prices` file is read
    /// under it.
    pub prices: PriceList,
}

impl<'c> Catalogs<'c> {
    pub(super) fn of(&self, kind: &CloudKind) -> Option<&'c Catalog> {
        kind.region?;
        (self.by_provider)(kind.provider.0)
    }

    /// Every cloud's catalog, for offers elsewhere.
    pub(super) fn all(&self) -> impl Iterator<Item = &'c Catalog> + '_ {
        CLOUDS.iter().filter_map(|k| self.of(k))
    }
}
