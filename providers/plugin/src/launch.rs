//! Starting a provider as go-plugin's client does: the process with the
//! handshake's environment, its handshake line read from stdout, its
//! stderr kept as its log, a gRPC channel to the address it announced
//! (over mutual TLS when it answered with a certificate), and at the end a
//! polite `Shutdown` before the process is killed.

use crate::handshake::{self, Address, Handshake};
use crate::proto::plugin::grpc_controller_client::GrpcControllerClient;
use crate::tls::{self, Identity};
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::net::{TcpStream, UnixStream};
use tokio::process::{Child, Command};
use tonic::transport::{Channel, Endpoint, Uri};

/// How many of the provider's last log lines an error shows.
const LOG_TAIL: usize = 40;
/// How long a provider has to print its handshake (go-plugin's default).
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a provider has to exit after `Shutdown` before it is killed
/// (go-plugin's grace period).
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How long a provider whose call failed is given to finish exiting, so
/// that a crash is told from a refusal.
const EXIT_NOTICE: Duration = Duration::from_millis(200);

/// What to start.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    /// Offered in `PLUGIN_PROTOCOL_VERSIONS`; the provider picks one.
    pub versions: Vec<u32>,
    /// Extra environment (on top of strata's own).
    pub env: Vec<(String, String)>,
}

impl Launch {
    /// A Terraform provider binary, offered protocols 5 and 6.
    pub fn provider(program: &Path) -> Launch {
        Launch {
            program: program.to_path_buf(),
            versions: vec![5, 6],
            env: Vec::new(),
        }
    }
}

/// The last lines a provider wrote to stderr.
#[derive(Debug, Clone, Default)]
pub struct ProviderLog(Arc<Mutex<VecDeque<String>>>);

impl ProviderLog {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.0.lock() {
            if lines.len() == LOG_TAIL {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// The kept lines, oldest first.
    pub fn tail(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("could not start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("{program} exited before its handshake{}", log_suffix(.log))]
    Exited { program: String, log: Vec<String> },
    #[error("{program} printed no handshake within {seconds} s{}", log_suffix(.log))]
    Timeout {
        program: String,
        seconds: u64,
        log: Vec<String>,
    },
    #[error("{program} is not a Terraform plugin: {source}\n  its first line: {line}")]
    Handshake {
        program: String,
        line: String,
        source: handshake::HandshakeError,
    },
    #[error("{program} chose protocol version {chose}, where strata offered {offered:?}")]
    Version {
        program: String,
        chose: u32,
        offered: Vec<u32>,
    },
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("could not connect to {program} at {address}: {source}")]
    Connect {
        program: String,
        address: String,
        source: tonic::transport::Error,
    },
}

pub(crate) fn log_suffix(log: &[String]) -> String {
    if log.is_empty() {
        String::new()
    } else {
        format!("; it wrote:\n{}", log.join("\n"))
    }
}

/// A started provider: its channel, the protocol it chose, its log.
pub struct Running {
    /// Behind a lock so that `stop` may wait for it through a shared
    /// reference: the driver's calls share the provider.
    child: tokio::sync::Mutex<Child>,
    pub channel: Channel,
    pub protocol_version: u32,
    pub log: ProviderLog,
    /// The reading of stderr, which ends when the process has gone: a
    /// crash's last lines are in the log once it has.
    stderr_read: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Running {
    pub async fn start(launch: &Launch) -> Result<Running, LaunchError> {
        let program = launch.program.display().to_string();
        let identity = Identity::generate(&rcgen::PKCS_ECDSA_P256_SHA256)?;
        let mut child = spawn(launch, &identity).map_err(|source| LaunchError::Spawn {
            program: program.clone(),
            source,
        })?;
        let log = ProviderLog::default();
        let stderr_read = child
            .stderr
            .take()
            .map(|stderr| tokio::spawn(keep_lines(stderr, log.clone())));
        let Some(stdout) = child.stdout.take() else {
            return Err(LaunchError::Exited {
                program,
                log: log.tail(),
            });
        };
        let mut stdout = BufReader::new(stdout);
        let line = match tokio::time::timeout(START_TIMEOUT, bounded_line(&mut stdout)).await {
            Ok(Ok(Some(line))) => line,
            Ok(_) => {
                // Let stderr's last lines arrive before they are shown.
                let _ = child.wait().await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(LaunchError::Exited {
                    program,
                    log: log.tail(),
                });
            }
            Err(_) => {
                let _ = child.kill().await;
                return Err(LaunchError::Timeout {
                    program,
                    seconds: START_TIMEOUT.as_secs(),
                    log: log.tail(),
                });
            }
        };
        // Whatever else it prints is log too; a pipe left unread would
        // stall it once full.
        tokio::spawn(keep_lines_of(stdout, log.clone()));
        let shake = Handshake::parse(&line).map_err(|source| LaunchError::Handshake {
            program: program.clone(),
            line: line.clone(),
            source,
        })?;
        // A provider given up on is killed (dropped), which leaves its
        // socket behind: removed here, so no start leaves litter.
        let given_up = |e: LaunchError| {
            if let Address::Unix(path) = &shake.address {
                let _ = std::fs::remove_file(path);
            }
            e
        };
        if !launch.versions.contains(&shake.protocol_version) {
            return Err(given_up(LaunchError::Version {
                program,
                chose: shake.protocol_version,
                offered: launch.versions.clone(),
            }));
        }
        let tls = match &shake.server_cert {
            Some(theirs) => Some(Arc::new(
                tls::client_config(&identity, theirs.clone()).map_err(|e| given_up(e.into()))?,
            )),
            None => None,
        };
        let channel = connect(&shake.address, tls).await.map_err(|source| {
            given_up(LaunchError::Connect {
                program,
                address: format!("{:?}", shake.address),
                source,
            })
        })?;
        Ok(Running {
            child: tokio::sync::Mutex::new(child),
            channel,
            protocol_version: shake.protocol_version,
            log,
            stderr_read: tokio::sync::Mutex::new(stderr_read),
        })
    }

    /// How the process ended, if it has (a call the provider did not
    /// answer is a crash when it has). The connection may break a moment
    /// before the process is gone, so the end is awaited briefly.
    pub async fn exited(&self) -> Option<std::process::ExitStatus> {
        let status = {
            let mut child = self.child.lock().await;
            tokio::time::timeout(EXIT_NOTICE, child.wait())
                .await
                .ok()?
                .ok()?
        };
        // What it wrote last (a panic's trace) is read to the end.
        if let Some(reading) = self.stderr_read.lock().await.take() {
            let _ = tokio::time::timeout(EXIT_NOTICE, reading).await;
        }
        Some(status)
    }

    /// Asks the provider to exit, then kills it if it has not within the
    /// grace period. A provider that exits by itself removes its socket
    /// from the temporary directory; a killed one leaves it behind.
    pub async fn stop(&self) {
        let mut controller = GrpcControllerClient::new(self.channel.clone());
        let asked = controller.shutdown(crate::proto::plugin::Empty {});
        let _ = tokio::time::timeout(STOP_GRACE, asked).await;
        let mut child = self.child.lock().await;
        if tokio::time::timeout(STOP_GRACE, child.wait())
            .await
            .is_err()
        {
            let _ = child.kill().await;
        }
    }
}

fn spawn(launch: &Launch, identity: &Identity) -> std::io::Result<Child> {
    let versions: Vec<String> = launch.versions.iter().map(u32::to_string).collect();
    let mut command = Command::new(&launch.program);
    die_with_parent(&mut command);
    command
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .env(handshake::MAGIC_COOKIE_KEY, handshake::MAGIC_COOKIE_VALUE)
        .env(handshake::PROTOCOL_VERSIONS_KEY, versions.join(","))
        .env(handshake::CLIENT_CERT_KEY, identity.pem())
        .env(handshake::MIN_PORT_KEY, "10000")
        .env(handshake::MAX_PORT_KEY, "25000")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        // A strata that stops for any reason takes its providers with it.
        .kill_on_drop(true)
        .spawn()
}

/// A strata killed by a signal takes its providers with it too (every
/// other ending drops the child, which kills it): the kernel sends SIGTERM
/// when the thread that started the provider ends, a worker of the plugin
/// driver's runtime, which lives as long as the driver.
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command) {
    // SAFETY: prctl is async-signal-safe and changes only the child.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_: &mut Command) {}

/// Makes a write to a socket the provider has closed fail with EPIPE on
/// this thread, rather than end strata: its binary restores SIGPIPE's
/// default action (so that `strata show | head` ends quietly), and a
/// provider closes its socket under a write whenever it exits after
/// `Shutdown` or crashes mid-call. Every write to a provider is made on
/// the plugin runtime's threads, which call this as they start; a signal
/// blocked there stays pending on that thread and does nothing.
#[cfg(unix)]
pub(crate) fn survive_closed_sockets() {
    // SAFETY: changes only the calling thread's signal mask.
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, std::ptr::null_mut());
    }
}

#[cfg(not(unix))]
pub(crate) fn survive_closed_sockets() {}

async fn keep_lines(from: impl AsyncRead + Unpin, log: ProviderLog) {
    keep_lines_of(BufReader::new(from), log).await
}

async fn keep_lines_of<R: AsyncBufRead + Unpin>(mut from: R, log: ProviderLog) {
    while let Ok(Some(line)) = bounded_line(&mut from).await {
        log.push(line);
    }
}

/// The most of one line of a provider's output that is kept: a handshake
/// is a few hundred bytes, a log line rarely more than a few thousand.
pub(crate) const LINE_KEPT: usize = 16 * 1024;

/// The next line of `from` without its newline, at most [`LINE_KEPT`]
/// bytes of it (the rest read and dropped, and said to be), so a provider
/// writing one endless line costs a bounded amount of memory. `None` at
/// the end of the stream.
pub(crate) async fn bounded_line<R: AsyncBufRead + Unpin>(
    from: &mut R,
) -> std::io::Result<Option<String>> {
    let mut kept = Vec::new();
    let mut dropped = 0usize;
    loop {
        let buf = from.fill_buf().await?;
        if buf.is_empty() {
            if kept.is_empty() && dropped == 0 {
                return Ok(None);
            }
            break;
        }
        let (piece, ended) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let room = LINE_KEPT.saturating_sub(kept.len());
        let take = piece.len().min(room);
        kept.extend_from_slice(&piece[..take]);
        dropped += piece.len() - take;
        let used = ended.unwrap_or(buf.len());
        from.consume(used);
        if ended.is_some() {
            break;
        }
    }
    if kept.last() == Some(&b'\r') {
        kept.pop();
    }
    let mut line = String::from_utf8_lossy(&kept).into_owned();
    if dropped > 0 {
        line.push_str(&format!("… ({dropped} more bytes not shown)"));
    }
    Ok(Some(line))
}

/// A connection of either kind, TLS or not.
trait Conn: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Conn for T {}

async fn connect(
    address: &Address,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> Result<Channel, tonic::transport::Error> {
    let address = address.clone();
    // The URI is go-plugin's placeholder: the connector decides where to go.
    let endpoint = Endpoint::from_static("http://localhost");
    endpoint
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let address = address.clone();
            let tls = tls.clone();
            async move { open(&address, tls).await.map(TokioIo::new) }
        }))
        .await
}

async fn open(
    address: &Address,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> std::io::Result<Box<dyn Conn>> {
    let plain: Box<dyn Conn> = match address {
        Address::Unix(path) => Box::new(UnixStream::connect(path).await?),
        Address::Tcp(addr) => Box::new(TcpStream::connect(addr).await?),
    };
    let Some(config) = tls else {
        return Ok(plain);
    };
    let connector = tokio_rustls::TlsConnector::from(config);
    let name = rustls::pki_types::ServerName::try_from(tls::HOST).map_err(std::io::Error::other)?;
    Ok(Box::new(connector.connect(name, plain).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_endless_line_costs_a_bounded_amount() {
        let mut text = vec![b'x'; 1 << 20];
        text.extend_from_slice(b"\nnext\r\nlast");
        let mut from = &text[..];
        let first = bounded_line(&mut from)
            .await
            .expect("read")
            .expect("a line");
        assert!(first.len() < LINE_KEPT + 64, "{} bytes kept", first.len());
        assert!(first.ends_with(&format!(
            "… ({} more bytes not shown)",
            (1 << 20) - LINE_KEPT
        )));
        assert_eq!(
            bounded_line(&mut from).await.expect("read").as_deref(),
            Some("next")
        );
        assert_eq!(
            bounded_line(&mut from).await.expect("read").as_deref(),
            Some("last")
        );
        assert_eq!(bounded_line(&mut from).await.expect("read"), None);
    }
}
