//! moto on a free port behind the test proxy, for the tests that drive the
//! AWS driver.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// moto, behind the test proxy (`testing/standin`) that stands in for
/// what moto lacks (EKS add-ons) and corrects what it gets wrong (S3
/// versioning's response element); `url` is the proxy's.
pub struct Moto {
    child: Child,
    pub url: String,
    /// moto itself, past the proxy (and its faults).
    pub direct: String,
    pub proxy: strata_standin::Server,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn moto() -> Moto {
    start(None)
}

/// moto whose EKS clusters' endpoints are the Kubernetes stand-in `kube`.
pub fn start(kube: Option<&strata_standin::kubernetes::Kube>) -> Moto {
    let server = std::env::var("STRATA_MOTO_SERVER").unwrap_or_else(|_| {
        panic!("the AWS tests need moto: run ./.ci/run, or set STRATA_MOTO_SERVER to a moto_server (pip install 'moto[s3]==5.2.5' flask flask-cors)")
    });
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let child = Command::new(&server)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .env("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {server}: {e}"));
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "moto did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let upstream = format!("http://127.0.0.1:{port}");
    let proxy = match kube {
        Some(k) => {
            strata_standin::proxy::start_with_kube(&upstream, k.endpoint(), Default::default())
        }
        None => strata_standin::start(&upstream),
    }
    .expect("the test proxy starts");
    Moto {
        child,
        direct: upstream,
        url: proxy.url.clone(),
        proxy,
    }
}

pub fn env_for(cmd: &mut Command, m: &Moto) {
    cmd.env("AWS_ENDPOINT_URL", &m.url)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env_remove("AWS_PROFILE")
        .env("NO_COLOR", "1");
}
