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
    dir: PathBuf,
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
    let config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {0}/host_key\nAuthorizedKeysFile {0}/authorized_keys\nPidFile {0}/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nSubsystem sftp internal-sftp\n",
        dir.display()
    );
    std::fs::write(dir.join("sshd_config"), config).expect("sshd_config");
    let child = Command::new(SSHD)
        .arg("-f")
        .arg(dir.join("sshd_config"))
        .args(["-D", "-e"])
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
    Some(Sshd {
        child,
        port,
        user,
        key: dir.join("user_key"),
        dir,
    })
}
