//! strata's Kubernetes and Helm drivers.
//!
//! `kubernetes` (Terraform's kubernetes provider's names and attributes):
//! `kubernetes_namespace`, `kubernetes_manifest` (any object, CRDs too)
//! and `kubernetes_labels`, all written with server-side apply as field
//! manager `strata`, so that strata owns exactly the fields it sets and
//! another manager's change to one of them is drift or a conflict, never
//! silently overwritten.
//!
//! `helm` (Terraform's helm provider's): `helm_release`, run through the
//! `helm` binary and read back from Helm's release records.
//!
//! Both reach the cluster through [`conn`]: a kubeconfig file and context,
//! or a host with a CA and a token, client certificate or exec credential
//! plugin, loaded by the `kube` crate.

mod conn;
mod helm;
mod nodes;
mod objects;

pub use helm::decode_release;

use async_trait::async_trait;
use conn::{Conn, Settings};
use std::collections::BTreeMap;
use std::sync::Arc;
use strata_provider::{BlockNesting, BlockSchema, Cloud, DriverError, Kind, Kinds, ResourceSchema};
use strata_value::value::Value;

/// The `kubernetes` driver.
pub struct Kubernetes {
    kinds: Kinds<Conn>,
    data: BTreeMap<String, ResourceSchema>,
    ctx: conn::Lazy<Conn>,
}

impl Default for Kubernetes {
    fn default() -> Self {
        Kubernetes::new()
    }
}

impl Kubernetes {
    pub fn new() -> Kubernetes {
        Kubernetes {
            kinds: Kinds::new(
                "kubernetes",
                vec![
                    (
                        "kubernetes_namespace",
                        Arc::new(objects::Namespace) as Arc<dyn Kind<Conn>>,
                    ),
                    ("kubernetes_manifest", Arc::new(objects::Manifest)),
                    ("kubernetes_labels", Arc::new(objects::Labels)),
                ],
            ),
            data: BTreeMap::from([
                (
                    "kubernetes_resource".to_string(),
                    objects::resource_data_schema(),
                ),
                (nodes::DATA.to_string(), nodes::schema()),
            ]),
            ctx: Default::default(),
        }
    }
}

#[async_trait]
impl Cloud for Kubernetes {
    type Ctx = Conn;

    fn another(&self) -> Kubernetes {
        Kubernetes::new()
    }
    fn name(&self) -> &str {
        "kubernetes"
    }

    fn provider_address(&self) -> String {
        "provider[\"registry.terraform.io/hashicorp/kubernetes\"]".to_string()
    }

    fn kinds(&self) -> &Kinds<Conn> {
        &self.kinds
    }

    async fn ctx(&self) -> &Conn {
        self.ctx.get(|s| async move { Conn::new(&s).await }).await
    }

    fn provider_schema(&self) -> ResourceSchema {
        conn::schema()
    }

    fn configure(&self, config: &Value) -> Result<(), DriverError> {
        self.ctx.configure(Settings::from_value(config));
        Ok(())
    }

    fn data_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        &self.data
    }

    async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, DriverError> {
        match type_name {
            "kubernetes_resource" => objects::read_resource(self.ctx().await, config).await,
            nodes::DATA => nodes::read(self.ctx().await, config).await,
            _ => Err(DriverError::UnknownType {
                driver: "kubernetes".into(),
                type_name: type_name.into(),
            }),
        }
    }
}

/// The `helm` driver.
pub struct Helm {
    kinds: Kinds<helm::HelmCtx>,
    ctx: conn::Lazy<helm::HelmCtx>,
}

impl Default for Helm {
    fn default() -> Self {
        Helm::new()
    }
}

impl Helm {
    pub fn new() -> Helm {
        Helm {
            kinds: Kinds::new(
                "helm",
                vec![(
                    "helm_release",
                    Arc::new(helm::Release) as Arc<dyn Kind<helm::HelmCtx>>,
                )],
            ),
            ctx: Default::default(),
        }
    }
}

#[async_trait]
impl Cloud for Helm {
    type Ctx = helm::HelmCtx;

    fn another(&self) -> Helm {
        Helm::new()
    }
    fn name(&self) -> &str {
        "helm"
    }

    fn provider_address(&self) -> String {
        "provider[\"registry.terraform.io/hashicorp/helm\"]".to_string()
    }

    fn kinds(&self) -> &Kinds<helm::HelmCtx> {
        &self.kinds
    }

    async fn ctx(&self) -> &helm::HelmCtx {
        self.ctx
            .get(|s| async move {
                helm::HelmCtx {
                    conn: Conn::new(&s).await,
                    source: s.kubeconfig(),
                }
            })
            .await
    }

    /// Terraform's helm provider takes the cluster in a `kubernetes` block.
    fn provider_schema(&self) -> ResourceSchema {
        let mut s = ResourceSchema::of_attributes(Vec::new());
        s.blocks.insert(
            "kubernetes".into(),
            BlockSchema {
                nesting: BlockNesting::Single,
                min_items: 0,
                max_items: Some(1),
                schema: conn::schema(),
                computed: false,
                deprecated: false,
            },
        );
        s
    }

    fn configure(&self, config: &Value) -> Result<(), DriverError> {
        let cluster = strata_provider::values::get(config, "kubernetes")
            .cloned()
            .filter(|v| !v.is_null())
            .unwrap_or_else(|| Value::Null(conn::schema().object_type()));
        self.ctx.configure(Settings::from_value(&cluster));
        Ok(())
    }
}
