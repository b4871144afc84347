//! The kubeconfig AKS hands out (`listClusterUserCredential`), read into
//! `kube_config` as the azurerm provider shapes it, so the kubernetes and
//! helm providers can reach the cluster: its address, the CA that signed
//! its certificate, and the user's certificate, key or token.

use base64::Engine;
use serde_json::{json, Value as Json};
use yaml_rust2::{Yaml, YamlLoader};

/// The kubeconfig text from its base64 form in the answer (empty when it
/// is not base64 of UTF-8).
pub fn decode(b64: &str) -> String {
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_default()
}

/// `kube_config[0]`: the first cluster's server and CA, and the first
/// user's credentials. Certificates stay base64-encoded PEM, as azurerm
/// gives them; what the kubeconfig lacks is null.
pub fn credentials(raw: &str) -> Json {
    let doc = YamlLoader::load_from_str(raw)
        .ok()
        .and_then(|d| d.into_iter().next())
        .unwrap_or(Yaml::Null);
    let first = |list: &str, key: &str| doc[list][0][key].clone();
    let cluster = first("clusters", "cluster");
    let user = first("users", "user");
    let text = |y: &Yaml| y.as_str().map(str::to_string);
    json!({
        "host": text(&cluster["server"]),
        "cluster_ca_certificate": text(&cluster["certificate-authority-data"]),
        "client_certificate": text(&user["client-certificate-data"]),
        "client_key": text(&user["client-key-data"]),
        "username": text(&doc["users"][0]["name"]),
        "password": text(&user["token"]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aks_user_kubeconfig_reads_as_azurerm_shapes_it() {
        let raw = "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: Q0E=\n    server: https://train-abc.hcp.eastus.azmk8s.io:443\n  name: train\ncontexts:\n- context:\n    cluster: train\n    user: clusterUser_rg_train\n  name: train\ncurrent-context: train\nkind: Config\nusers:\n- name: clusterUser_rg_train\n  user:\n    client-certificate-data: Q0VSVA==\n    client-key-data: S0VZ\n    token: abc123\n";
        let b64 = base64::engine::general_purpose::STANDARD.encode(raw);
        assert_eq!(decode(&b64), raw);
        let c = credentials(raw);
        assert_eq!(c["host"], "https://train-abc.hcp.eastus.azmk8s.io:443");
        assert_eq!(c["cluster_ca_certificate"], "Q0E=");
        assert_eq!(c["client_certificate"], "Q0VSVA==");
        assert_eq!(c["client_key"], "S0VZ");
        assert_eq!(c["password"], "abc123");
        assert_eq!(c["username"], "clusterUser_rg_train");
        assert_eq!(credentials("not: [yaml")["host"], Json::Null);
    }
}
