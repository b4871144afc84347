//! The plugin side of go-plugin's handshake, for providers written in Rust
//! (strata's test provider): check the magic cookie, pick a protocol
//! version from those offered, listen on a Unix socket, make a certificate
//! when the client sent one, print the handshake line, and serve until the
//! client's `Shutdown`.

use crate::handshake::{self, Address, Handshake};
use crate::proto::plugin::grpc_controller_server::{GrpcController, GrpcControllerServer};
use crate::proto::plugin::Empty;
use crate::tls::{self, Identity};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::UnixListener;
use tokio::sync::{mpsc, Notify};
use tokio_stream::wrappers::{ReceiverStream, UnixListenerStream};
use tonic::service::Routes;
use tonic::transport::Server;
use tonic::{Request, Response, Status};

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Started by hand: go-plugin's own words for it.
    #[error(
        "This binary is a plugin. These are not meant to be executed directly.\n\
         Please execute the program that consumes these plugins, which will\n\
         load any plugins automatically"
    )]
    NotStartedByClient,
    #[error("listening on {path}: {source}")]
    Listen {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("writing the handshake: {0}")]
    Handshake(std::io::Error),
    #[error("serving: {0}")]
    Serve(#[from] tonic::transport::Error),
}

/// The newest of `supported` the client offered; failing that the oldest
/// supported, which the client will refuse with its own message (what
/// go-plugin's servers do).
pub fn negotiate(supported: &[u32], offered: &[u32]) -> u32 {
    let mut ours = supported.to_vec();
    ours.sort_unstable();
    ours.iter()
        .rev()
        .find(|v| offered.contains(v))
        .or(ours.first())
        .copied()
        .unwrap_or(0)
}

/// Serves `routes` (the provider service for `version`, which `routes_for`
/// makes once the version is chosen) until the client shuts the plugin
/// down.
pub async fn serve(
    supported: &[u32],
    routes_for: impl FnOnce(u32) -> Routes,
) -> Result<(), ServeError> {
    if std::env::var(handshake::MAGIC_COOKIE_KEY).as_deref() != Ok(handshake::MAGIC_COOKIE_VALUE) {
        return Err(ServeError::NotStartedByClient);
    }
    let offered = std::env::var(handshake::PROTOCOL_VERSIONS_KEY)
        .map(|v| handshake::offered_versions(&v))
        .unwrap_or_default();
    let version = negotiate(supported, &offered);

    let path = socket_path();
    let listener = UnixListener::bind(&path).map_err(|source| ServeError::Listen {
        path: path.display().to_string(),
        source,
    })?;
    let client_cert = std::env::var(handshake::CLIENT_CERT_KEY).unwrap_or_default();
    let (tls, server_cert) = if client_cert.is_empty() {
        (None, None)
    } else {
        // go-plugin's servers make P-521 certificates; so does this one,
        // so a client is tried against what real providers present.
        let ours = Identity::generate(&rcgen::PKCS_ECDSA_P521_SHA512)?;
        let config = tls::server_config(&ours, tls::der_from_pem(&client_cert)?)?;
        (Some(Arc::new(config)), Some(ours.der().to_vec()))
    };
    let shake = Handshake {
        protocol_version: version,
        address: Address::Unix(path.clone()),
        server_cert,
    };
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{shake}")
        .and_then(|()| stdout.flush())
        .map_err(ServeError::Handshake)?;

    let stop = Arc::new(Notify::new());
    let routes = routes_for(version)
        .add_service(GrpcControllerServer::new(Controller { stop: stop.clone() }));
    let stopped = async move { stop.notified().await };
    let router = Server::builder().add_routes(routes);
    let served = match tls {
        None => {
            let incoming = UnixListenerStream::new(listener);
            router.serve_with_incoming_shutdown(incoming, stopped).await
        }
        Some(config) => {
            let incoming = accept_tls(listener, config);
            router.serve_with_incoming_shutdown(incoming, stopped).await
        }
    };
    let _ = std::fs::remove_file(&path);
    Ok(served?)
}

/// A fresh socket path in the temporary directory, as go-plugin makes them.
fn socket_path() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!("plugin{}{nanos}", std::process::id()))
}

type TlsConn = tokio_rustls::server::TlsStream<tokio::net::UnixStream>;

/// Connections that finished their TLS handshake; one that fails it is
/// dropped without stopping the others.
fn accept_tls(
    listener: UnixListener,
    config: Arc<rustls::ServerConfig>,
) -> ReceiverStream<std::io::Result<TlsConn>> {
    let (send, receive) = mpsc::channel(4);
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let send = send.clone();
            tokio::spawn(async move {
                match acceptor.accept(conn).await {
                    Ok(tls) => {
                        let _ = send.send(Ok(tls)).await;
                    }
                    Err(e) => eprintln!("plugin: TLS handshake failed: {e}"),
                }
            });
        }
    });
    ReceiverStream::new(receive)
}

/// go-plugin's controller: `Shutdown` ends the serving.
struct Controller {
    stop: Arc<Notify>,
}

#[tonic::async_trait]
impl GrpcController for Controller {
    async fn shutdown(&self, _: Request<Empty>) -> Result<Response<Empty>, Status> {
        self.stop.notify_one();
        Ok(Response::new(Empty {}))
    }
}

#[cfg(test)]
mod tests {
    use super::negotiate;

    #[test]
    fn the_newest_offered_version_is_chosen() {
        assert_eq!(negotiate(&[5, 6], &[5, 6]), 6);
        assert_eq!(negotiate(&[5, 6], &[5]), 5);
        assert_eq!(negotiate(&[6], &[4]), 6);
    }
}
