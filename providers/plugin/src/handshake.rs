//! go-plugin's handshake: what a client puts in the plugin's environment,
//! and the one line the plugin answers on stdout.
//!
//! The line is `CORE|APP|NETWORK|ADDRESS|PROTOCOL|CERT`: go-plugin's own
//! version (always 1), the negotiated application protocol (5 or 6 for
//! Terraform providers), `unix` or `tcp` and where to connect, `grpc`, and
//! with AutoMTLS the plugin's certificate as unpadded base64 of its DER.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use std::fmt;
use std::path::PathBuf;

/// The variable and value that tell a Terraform provider it was started by
/// a client, not by hand (Terraform's documented magic cookie).
pub const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
pub const MAGIC_COOKIE_VALUE: &str =
    "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
/// The protocol versions a client offers, comma-separated.
pub const PROTOCOL_VERSIONS_KEY: &str = "PLUGIN_PROTOCOL_VERSIONS";
/// The client's certificate (PEM) when it wants mutual TLS.
pub const CLIENT_CERT_KEY: &str = "PLUGIN_CLIENT_CERT";
/// The TCP port range a plugin may listen on where it has no Unix sockets.
pub const MIN_PORT_KEY: &str = "PLUGIN_MIN_PORT";
pub const MAX_PORT_KEY: &str = "PLUGIN_MAX_PORT";

/// go-plugin's own protocol version, the line's first field.
const CORE_PROTOCOL_VERSION: u32 = 1;

/// Where the plugin listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    Unix(PathBuf),
    Tcp(String),
}

/// A plugin's handshake line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    /// The application protocol version the plugin chose.
    pub protocol_version: u32,
    pub address: Address,
    /// The plugin's certificate (DER), when it serves TLS.
    pub server_cert: Option<Vec<u8>>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HandshakeError {
    #[error("the handshake line has {0} fields where go-plugin sends at least 4")]
    TooFewFields(usize),
    #[error("go-plugin protocol version {0:?}, where this client speaks 1")]
    CoreVersion(String),
    #[error("application protocol version {0:?} is not a number")]
    AppVersion(String),
    #[error("network {0:?}, where a plugin listens on \"unix\" or \"tcp\"")]
    Network(String),
    #[error("wire protocol {0:?}, where Terraform providers speak \"grpc\"")]
    Protocol(String),
    #[error("the plugin's certificate is not base64: {0}")]
    Certificate(String),
}

impl Handshake {
    /// Reads the line (without its newline).
    pub fn parse(line: &str) -> Result<Handshake, HandshakeError> {
        let fields: Vec<&str> = line.trim_end().split('|').collect();
        if fields.len() < 4 {
            return Err(HandshakeError::TooFewFields(fields.len()));
        }
        if fields[0].parse::<u32>() != Ok(CORE_PROTOCOL_VERSION) {
            return Err(HandshakeError::CoreVersion(fields[0].to_string()));
        }
        let protocol_version = fields[1]
            .parse()
            .map_err(|_| HandshakeError::AppVersion(fields[1].to_string()))?;
        let address = match fields[2] {
            "unix" => Address::Unix(PathBuf::from(fields[3])),
            "tcp" => Address::Tcp(fields[3].to_string()),
            other => return Err(HandshakeError::Network(other.to_string())),
        };
        // Before go-plugin had gRPC the field was absent and meant net/rpc.
        match fields.get(4).copied().unwrap_or("netrpc") {
            "grpc" => {}
            other => return Err(HandshakeError::Protocol(other.to_string())),
        }
        let server_cert = match fields.get(5).copied().unwrap_or("") {
            "" => None,
            // go-plugin writes it unpadded; a padded one is read as well.
            text => Some(
                STANDARD_NO_PAD
                    .decode(text.trim_end_matches('='))
                    .or_else(|_| STANDARD.decode(text))
                    .map_err(|e| HandshakeError::Certificate(e.to_string()))?,
            ),
        };
        Ok(Handshake {
            protocol_version,
            address,
            server_cert,
        })
    }
}

/// Written by a plugin server; the inverse of [`Handshake::parse`].
impl fmt::Display for Handshake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (network, address) = match &self.address {
            Address::Unix(path) => ("unix", path.display().to_string()),
            Address::Tcp(addr) => ("tcp", addr.clone()),
        };
        let cert = self
            .server_cert
            .as_deref()
            .map(|der| STANDARD_NO_PAD.encode(der))
            .unwrap_or_default();
        write!(
            f,
            "{CORE_PROTOCOL_VERSION}|{}|{network}|{address}|grpc|{cert}",
            self.protocol_version
        )
    }
}

/// The versions offered in `PLUGIN_PROTOCOL_VERSIONS`, as a server reads
/// them; numbers that do not parse are left out, as go-plugin leaves them.
pub fn offered_versions(value: &str) -> Vec<u32> {
    value
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_written() {
        let shake = Handshake {
            protocol_version: 6,
            address: Address::Unix(PathBuf::from("/tmp/plugin123")),
            server_cert: Some(vec![0x30, 0x82, 0x01, 0xff]),
        };
        let line = shake.to_string();
        assert_eq!(line, "1|6|unix|/tmp/plugin123|grpc|MIIB/w");
        assert_eq!(Handshake::parse(&line), Ok(shake));
    }

    #[test]
    fn a_plain_tcp_line_has_no_certificate() {
        let shake = Handshake::parse("1|5|tcp|127.0.0.1:1234|grpc\n").unwrap();
        assert_eq!(shake.address, Address::Tcp("127.0.0.1:1234".into()));
        assert_eq!(shake.protocol_version, 5);
        assert_eq!(shake.server_cert, None);
    }

    #[test]
    fn a_bad_line_names_its_fault() {
        let cases = [
            ("hello", HandshakeError::TooFewFields(1)),
            ("2|6|unix|/x|grpc", HandshakeError::CoreVersion("2".into())),
            (
                "1|six|unix|/x|grpc",
                HandshakeError::AppVersion("six".into()),
            ),
            ("1|6|pipe|/x|grpc", HandshakeError::Network("pipe".into())),
            ("1|6|unix|/x", HandshakeError::Protocol("netrpc".into())),
            (
                "1|6|unix|/x|netrpc",
                HandshakeError::Protocol("netrpc".into()),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(Handshake::parse(line), Err(want), "{line}");
        }
        assert!(matches!(
            Handshake::parse("1|6|unix|/x|grpc|%%%"),
            Err(HandshakeError::Certificate(_))
        ));
    }

    #[test]
    fn offered_versions_skip_what_is_not_a_number() {
        assert_eq!(offered_versions("5,6"), vec![5, 6]);
        assert_eq!(offered_versions("x,6"), vec![6]);
    }
}
