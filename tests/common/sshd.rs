//! OpenSSH's server on a free port of 127.0.0.1, as the current user with
//! a key of its own, for the provisioners that connect to a machine
//! (`remote-exec`, `file`). Debian's `openssh-server` (`.ci/run` installs
//! it); under CI=true a missing one fails the test rather than skipping it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

pub struct Sshd {
    child: Child,
    pub port: u16,
    pub user: String,
    /// The private key the server accepts.
    pub key: PathBuf,
    /// The server's public host key, as `host_key` takes it.
    pub host_key: String,
    dir: PathBuf,
}

impl Sshd {
    /// How many logins the server has accepted so far.
    pub fn logins(&self) -> usize {
        std::fs::read_to_string(self.dir.join("log"))
            .unwrap_or_default()
            .matches("Accepted ")
            .count()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "ssh-keygen made no key at {}", path.display());
}

/// The server, or `None` (said) where it is missing outside CI.
pub fn start(test: &str) -> Option<Sshd> {
    launch(test, None)
}

/// The server taking `password` for root too, or `None` (said) outside
/// CI where it cannot run. The password is root's only inside a mount
/// namespace of the server's own (`unshare -m`, which needs root), where
/// a copy of `/etc/shadow` holding its hash is mounted over the real one:
/// the machine's own accounts are left as they are.
pub fn start_with_password(test: &str, password: &str) -> Option<Sshd> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    assert!(
        root || std::env::var("CI").as_deref() != Ok("true"),
        "{test} logs in with a password, which needs the server run as root (as CI runs)"
    );
    if !root {
        eprintln!("SKIPPED {test}: a password login needs the server run as root");
        return None;
    }
    launch(test, Some(password))
}

/// Root's entry of `/etc/shadow` given `password`'s hash.
fn shadow_with(password: &str) -> String {
    let hashed = Command::new("openssl")
        .args(["passwd", "-6", "-stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .expect("stdin")
                .write_all(password.as_bytes())?;
            c.wait_with_output()
        })
        .expect("openssl hashes the password");
    let hash = String::from_utf8_lossy(&hashed.stdout).trim().to_string();
    let shadow = std::fs::read_to_string("/etc/shadow").expect("/etc/shadow");
    shadow
        .lines()
        .map(|l| match l.split_once(':') {
            Some(("root", rest)) => {
                let after = rest.split_once(':').map_or("", |(_, a)| a);
                format!("root:{hash}:{after}\n")
            }
            _ => format!("{l}\n"),
        })
        .collect()
}

fn launch(test: &str, password: Option<&str>) -> Option<Sshd> {
    let found = Path::new(SSHD).is_file();
    assert!(
        found || std::env::var("CI").as_deref() != Ok("true"),
        "{SSHD} is missing; under CI=true {test} must run against it (apt-get install openssh-server, or ./.ci/run)"
    );
    if !found {
        eprintln!("SKIPPED {test}: no {SSHD} here");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("strata-sshd-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("sshd folder");
    keygen(&dir.join("host_key"));
    keygen(&dir.join("user_key"));
    std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).expect("authorized keys");
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let mut config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {0}/host_key\nAuthorizedKeysFile {0}/authorized_keys\nPidFile {0}/sshd.pid\nStrictModes no\nUsePAM no\nSubsystem sftp internal-sftp\n",
        dir.display()
    );
    let mut command = match password {
        None => {
            config.push_str("PasswordAuthentication no\n");
            Command::new(SSHD)
        }
        Some(password) => {
            config.push_str("PasswordAuthentication yes\nKbdInteractiveAuthentication no\nPermitRootLogin yes\n");
            let shadow = dir.join("shadow");
            std::fs::write(&shadow, shadow_with(password)).expect("shadow copy");
            let mut c = Command::new("unshare");
            c.args([
                "-m",
                "sh",
                "-c",
                r#"mount --bind "$0" /etc/shadow && exec "$@""#,
            ])
            .arg(&shadow)
            .arg(SSHD);
            c
        }
    };
    std::fs::write(dir.join("sshd_config"), config).expect("sshd_config");
    let child = command
        .arg("-f")
        .arg(dir.join("sshd_config"))
        .arg("-D")
        .arg("-E")
        .arg(dir.join("log"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("sshd starts");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "sshd did not listen (as root it needs /run/sshd, which .ci/run makes)"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let user = String::from_utf8_lossy(
        &Command::new("id")
            .arg("-un")
            .output()
            .expect("id runs")
            .stdout,
    )
    .trim()
    .to_string();
    let host_key = std::fs::read_to_string(dir.join("host_key.pub")).expect("host key");
    Some(Sshd {
        child,
        port,
        user,
        key: dir.join("user_key"),
        host_key: host_key.trim().to_string(),
        dir,
    })
}
