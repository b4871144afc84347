//! What node groups and add-ons share: objects that live in a cluster,
//! named within it (id `CLUSTER:NAME`), described one at a time, with a
//! status and health issues. A type says how EKS is asked ([`Member`]);
//! reading, waiting, deleting, importing and finding what a lost create
//! made are written once here.

use super::{has_ownership, in_every_cluster, owned};
use crate::values::{id_pair, object, required, string};
use crate::wait::{gone, ready, timeout, Poll};
use crate::Clients;
use async_trait::async_trait;
use std::collections::HashMap;
use std::time::Duration;
use strata_provider::{DriverError, Tags};
use strata_value::value::Value;

#[async_trait]
pub(super) trait Member: Sync {
    /// The resource type, `aws_eks_node_group`.
    const TYPE: &'static str;
    /// The attribute naming it within its cluster, `node_group_name`.
    const NAME: &'static str;
    /// How messages name it, `node group`.
    const NOUN: &'static str;
    /// The second half of its id in messages, `NODE_GROUP`.
    const ID_NAME: &'static str;
    /// Terraform's default timeouts: create and update, and delete.
    const WAIT: Duration;
    const DELETE_WAIT: Duration;

    type Object: Send + Sync;

    /// The object, `None` when the cluster has none of that name.
    async fn describe(
        &self,
        c: &Clients,
        cluster: &str,
        name: &str,
    ) -> Result<Option<Self::Object>, DriverError>;

    /// The names of every such object in the cluster, across pages.
    async fn names(&self, c: &Clients, cluster: &str) -> Result<Vec<String>, DriverError>;

    /// Asks EKS to delete it; `false` when it was gone already.
    async fn request_delete(
        &self,
        c: &Clients,
        cluster: &str,
        name: &str,
        prior: &Value,
    ) -> Result<bool, DriverError>;

    fn status(o: &Self::Object) -> &str;
    fn tags(o: &Self::Object) -> Option<&HashMap<String, String>>;
    /// Its health issues as one line (`code: message; …`).
    fn health(o: &Self::Object) -> String;
    /// The object as a value, with what `from` holds that EKS does not
    /// (configuration-only arguments, `timeouts`).
    fn value(o: &Self::Object, from: Option<&Value>) -> Value;
}

/// Statuses that end a wait with an error (not every type has all).
const FAILED: [&str; 4] = [
    "CREATE_FAILED",
    "UPDATE_FAILED",
    "DELETE_FAILED",
    "DEGRADED",
];

/// One look at the object: ready when ACTIVE, failed (its health issues
/// classified: a capacity shortage is a capacity error), gone, or pending.
pub(super) async fn look<K: Member>(
    k: &K,
    c: &Clients,
    cluster: &str,
    name: &str,
    from: Option<&Value>,
) -> Result<Poll, DriverError> {
    let Some(o) = k.describe(c, cluster, name).await? else {
        return Ok(Poll::Gone);
    };
    Ok(match K::status(&o) {
        "ACTIVE" => Poll::Ready(K::value(&o, from)),
        status if FAILED.contains(&status) => Poll::Failed(crate::error::classify(
            &format!("EKS {}", K::NOUN),
            format!("{} {name} is {status}: {}", K::NOUN, K::health(&o)),
            false,
        )),
        status => Poll::Pending(status.to_string()),
    })
}

/// Waits for the object `v` describes (named `name`, which a create may
/// have chosen) to be ACTIVE, within `v`'s `timeouts` for `op`.
pub(super) async fn wait_active<K: Member>(
    k: &K,
    c: &Clients,
    v: &Value,
    name: &str,
    op: &str,
) -> Result<Value, DriverError> {
    let cluster = required(v, K::TYPE, "cluster_name")?;
    let t = timeout(v, op, K::WAIT);
    ready(&format!("waiting for EKS {} {name}", K::NOUN), t, || {
        look(k, c, &cluster, name, Some(v))
    })
    .await
}

/// What EKS holds for each object, whatever its status (mid-change or
/// unhealthy); `None` for one it does not have.
pub(super) async fn read<K: Member>(
    k: &K,
    c: &Clients,
    objs: &[Value],
) -> Result<Vec<Option<Value>>, DriverError> {
    let mut out = Vec::with_capacity(objs.len());
    for o in objs {
        let found = match (string(o, "cluster_name"), string(o, K::NAME)) {
            (Some(cluster), Some(name)) => k.describe(c, &cluster, &name).await?,
            _ => None,
        };
        out.push(found.map(|f| K::value(&f, Some(o))));
    }
    Ok(out)
}

/// Deletes the object and waits until EKS no longer has it.
pub(super) async fn delete<K: Member>(
    k: &K,
    c: &Clients,
    prior: &Value,
) -> Result<(), DriverError> {
    let cluster = required(prior, K::TYPE, "cluster_name")?;
    let name = required(prior, K::TYPE, K::NAME)?;
    if !k.request_delete(c, &cluster, &name, prior).await? {
        return Ok(());
    }
    let t = timeout(prior, "delete", K::DELETE_WAIT);
    gone(&format!("deleting EKS {} {name}", K::NOUN), t, || {
        look(k, c, &cluster, &name, None)
    })
    .await
}

/// Crash recovery: every such object, in every cluster, that carries the
/// ownership tags `t`.
pub(super) async fn find_tagged<K: Member>(
    k: &K,
    c: &Clients,
    t: &Tags,
) -> Result<Vec<Value>, DriverError> {
    in_every_cluster(c, |cluster| async move {
        let names = k.names(c, &cluster).await?;
        let cluster = &cluster;
        owned(names, |name| async move {
            let o = k.describe(c, cluster, &name).await?;
            Ok(o.filter(|o| has_ownership(K::tags(o), t))
                .map(|o| K::value(&o, None)))
        })
        .await
    })
    .await
}

/// Imported as `CLUSTER:NAME`.
pub(super) async fn import<K: Member>(
    k: &K,
    c: &Clients,
    id: &str,
) -> Result<Option<Value>, DriverError> {
    let form = format!("CLUSTER:{}", K::ID_NAME);
    let (cluster, name) = id_pair(id, ':', K::TYPE, &form)?;
    let probe = object(vec![
        ("cluster_name", Value::string(cluster)),
        (K::NAME, Value::string(name)),
    ]);
    Ok(read(k, c, &[probe]).await?.pop().flatten())
}
