//! A `connection` block's values as a [`Connection`], with Terraform
//! 1.11's defaults: `user` root, `port` 22, `timeout` 5m, the SSH agent
//! used when `agent` is not given and `SSH_AUTH_SOCK` is set, and a
//! bastion's user, password, key, certificate and port taken from the
//! target's where not given. What strata's SSH connections cannot do
//! (WinRM, a proxy host) is refused by name, never ignored.

use super::ssh::{self, Connection, Endpoint};
use super::{set, text};
use crate::config::Provisioner;
use crate::diag::Diag;
use crate::lang::value::Value;
use std::time::Duration;

pub(super) fn reached(p: &Provisioner, c: &Value) -> Result<Connection, Diag> {
    let refused = |detail: &str| {
        let summary = format!("{} provisioner error", p.kind.name());
        Diag::new("strata::provision::connection", summary, detail).at(p.span)
    };
    match text(c, "type").as_deref() {
        None | Some("ssh") => {}
        Some(other) => {
            return Err(refused(&format!(
                "strata connects over SSH; connection type {other:?} is not supported yet."
            )))
        }
    }
    if set(c, "proxy_host") {
        return Err(refused("strata's SSH connections go to the host directly or through a bastion host; a proxy host is not supported yet."));
    }
    match text(c, "target_platform").as_deref() {
        None | Some("unix") => {}
        Some("windows") => return Err(refused("strata's SSH connections reach unix hosts; target_platform \"windows\" is not supported yet.")),
        Some(_) => return Err(refused("target_platform for provisioner has to be either unix or windows")),
    }
    let port = |name: &str, default: u16| {
        port(c, name, default)
            .ok_or_else(|| refused(&format!("The connection's {name} is not a port number.")))
    };
    let timeout = match text(c, "timeout") {
        Some(t) => ssh::duration(&t).ok_or_else(|| {
            refused(&format!(
                "The connection's timeout {t:?} is not a duration such as \"5m\" or \"30s\"."
            ))
        })?,
        None => Duration::from_secs(300),
    };
    let target = Endpoint {
        host: text(c, "host").unwrap_or_default(),
        port: port("port", 22)?,
        user: text(c, "user").unwrap_or_else(|| "root".into()),
        password: text(c, "password"),
        private_key: text(c, "private_key"),
        certificate: text(c, "certificate"),
        host_key: text(c, "host_key"),
    };
    let bastion = match text(c, "bastion_host") {
        Some(host) => Some(Endpoint {
            host,
            port: port("bastion_port", target.port)?,
            user: text(c, "bastion_user").unwrap_or_else(|| target.user.clone()),
            password: text(c, "bastion_password").or_else(|| target.password.clone()),
            private_key: text(c, "bastion_private_key").or_else(|| target.private_key.clone()),
            certificate: text(c, "bastion_certificate").or_else(|| target.certificate.clone()),
            host_key: text(c, "bastion_host_key"),
        }),
        None => None,
    };
    let agent = match c.unmarked().entries().and_then(|m| m.get("agent")) {
        Some(v) if !v.is_null() => v.unmarked().as_bool().unwrap_or(false),
        _ => std::env::var_os("SSH_AUTH_SOCK").is_some_and(|s| !s.is_empty()),
    };
    Ok(Connection {
        target,
        bastion,
        agent,
        timeout,
        script_path: text(c, "script_path").unwrap_or_else(|| "/tmp/terraform_%RAND%.sh".into()),
    })
}

/// The port `name` gives, `default` when it is not given; `None` when it
/// is not one.
fn port(c: &Value, name: &str, default: u16) -> Option<u16> {
    let given = c.unmarked().entries().and_then(|m| m.get(name));
    match given.filter(|v| !v.is_null()) {
        None => Some(default),
        Some(v) => v
            .unmarked()
            .as_number()
            .and_then(|n| n.to_i64())
            .and_then(|n| u16::try_from(n).ok())
            // Terraform reads port 0 as "not given".
            .map(|p| if p == 0 { default } else { p }),
    }
}
