//! MultiKueue as the tests look at it: the manager's objects in a state
//! (`strata show -json`), and its kubeconfigs held to the checks Kueue
//! 0.19's manager applies before it uses one
//! (`pkg/controller/admissionchecks/multikueue/multikueuecluster.go`,
//! `validateKubeconfig` and `validateRestConfig`), then used as Kueue
//! would: the worker's API server, trusted by the CA data alone, with the
//! token alone.

use serde_json::Value as Json;

/// The attributes of instance `key` of resource `module.type.name` in a
/// state file (what `show -json` leaves out of a secret, the state holds),
/// and its sensitive paths.
pub fn instance<'a>(state: &'a Json, module: &str, resource: &str, key: &Json) -> &'a Json {
    let (ty, name) = resource.split_once('.').expect("type.name");
    state["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["module"] == module && r["type"] == ty && r["name"] == name)
        .flat_map(|r| r["instances"].as_array().into_iter().flatten())
        .find(|i| i["index_key"] == *key && i["deposed"].is_null())
        .unwrap_or_else(|| panic!("{module}.{resource}[{key}] in state"))
}

/// The dynamic attribute `name` of a state instance, as a value.
pub fn dynamic<'a>(instance: &'a Json, name: &str) -> &'a Json {
    &instance["attributes"][name]["value"]
}

/// The manager's kubeconfig for worker `worker` of cluster `cluster`,
/// from its Secret, and whether the state keeps it as sensitive.
pub fn kubeconfig_of(state: &Json, cluster: &str, worker: &str) -> (String, bool) {
    use base64::Engine;
    let module = format!("module.{cluster}_manager.module.runtime[0]");
    let secret = instance(
        state,
        &module,
        "kubernetes_manifest.worker_kubeconfig",
        &Json::from(worker),
    );
    let data = dynamic(secret, "manifest")["data"]["kubeconfig"]
        .as_str()
        .unwrap_or_else(|| panic!("{worker}'s Secret holds a kubeconfig: {secret}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64");
    let marked = secret["sensitive_attributes"].to_string();
    let sensitive = marked.contains("\"manifest\"") && marked.contains("\"kubeconfig\"");
    (String::from_utf8(bytes).expect("UTF-8"), sensitive)
}

/// Why Kueue's manager would refuse `kubeconfig`, or `None`.
pub fn kueue_refuses(kubeconfig: &str) -> Option<String> {
    let k: serde_yaml::Value = match serde_yaml::from_str(kubeconfig) {
        Ok(k) => k,
        Err(e) => return Some(format!("failed to parse kubeconfig: {e}")),
    };
    let list = |key: &str| k[key].as_sequence().cloned().unwrap_or_default();
    for user in list("users") {
        let u = &user["user"];
        for (field, why) in [
            ("tokenFile", "tokenFile is not allowed"),
            ("exec", "exec plugins are not allowed"),
            ("auth-provider", "auth providers are not allowed"),
            ("username", "basic auth is not allowed"),
            ("password", "basic auth is not allowed"),
        ] {
            if !u[field].is_null() {
                return Some(why.into());
            }
        }
    }
    for cluster in list("clusters") {
        let c = &cluster["cluster"];
        if c["insecure-skip-tls-verify"].as_bool() == Some(true) {
            return Some("insecure TLS verification is not allowed".into());
        }
        if !c["certificate-authority"].is_null() {
            return Some("certificate-authority file paths are not allowed".into());
        }
        let Some(server) = c["server"].as_str().filter(|s| !s.is_empty()) else {
            return Some("server URL is required".into());
        };
        if !trusted_host(server) {
            return Some(format!("untrusted server endpoint {server}"));
        }
    }
    None
}

/// An IP address or a DNS-1123 subdomain, as Kueue's `isValidHostname`.
fn trusted_host(server: &str) -> bool {
    let rest = server.split_once("://").map_or(server, |(_, r)| r);
    let host_port = rest.split('/').next().unwrap_or_default();
    let host = host_port.rsplit_once(':').map_or(host_port, |(h, _)| h);
    if host.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    !host.is_empty() && host.len() <= 253 && host.split('.').all(label)
}

/// What the worker answers the kubeconfig's user to `GET path`: the
/// server and CA data from it, its token as the bearer.
pub fn as_dispatcher(kubeconfig: &str, path: &str) -> (u16, String) {
    use base64::Engine;
    let k: serde_yaml::Value = serde_yaml::from_str(kubeconfig).expect("YAML");
    let cluster = &k["clusters"][0]["cluster"];
    let server = cluster["server"].as_str().expect("server");
    let ca = base64::engine::general_purpose::STANDARD
        .decode(
            cluster["certificate-authority-data"]
                .as_str()
                .expect("CA data"),
        )
        .expect("base64 CA");
    let token = k["users"][0]["user"]["token"].as_str().expect("token");
    let url = format!("{}{path}", server.trim_end_matches('/'));
    let auth = format!("Bearer {token}");
    super::sandbox::https(&ca, ("GET", &url), &auth, "application/json", "")
}

/// The bearer token in `kubeconfig`.
pub fn token(kubeconfig: &str) -> String {
    let k: serde_yaml::Value = serde_yaml::from_str(kubeconfig).expect("YAML");
    k["users"][0]["user"]["token"]
        .as_str()
        .expect("token")
        .to_string()
}
