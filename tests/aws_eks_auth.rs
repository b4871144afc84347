//! `ephemeral "aws_eks_cluster_auth"` in the native AWS driver (issue 45):
//! the EKS token made where it is used and kept nowhere. Its schema is
//! held to the AWS provider 5.100.0's in `aws_provider_schema.rs`; here the
//! token is taken apart and its SigV4 signature computed again by an
//! independent implementation (Python's `hmac` and `hashlib`, from the
//! algorithm's published steps), so a token the API server would send on
//! to STS is one STS would accept. The credentials are moto's test keys.

mod common;

use common::moto::{env_for, moto};
use std::process::Command;

const CONFIG: &str = r#"
provider "aws" {
  region = "us-east-1"
}

ephemeral "aws_eks_cluster_auth" "gpu" {
  name = "gpu-cluster"
}

resource "terraform_data" "uses" {
  provisioner "local-exec" {
    command     = "printf %s \"$TOKEN\" > token.txt"
    environment = { TOKEN = ephemeral.aws_eks_cluster_auth.gpu.token }
  }
}
"#;

/// Recomputes the signature of the presigned URL in a token from the
/// secret key, and prints the URL's query as JSON with `recomputed`.
const VERIFY: &str = r#"
import base64, hashlib, hmac, json, sys, urllib.parse
token, secret = sys.argv[1], sys.argv[2]
assert token.startswith("k8s-aws-v1."), token
b = token[len("k8s-aws-v1."):]
url = base64.urlsafe_b64decode(b + "=" * (-len(b) % 4)).decode()
parts = urllib.parse.urlsplit(url)
query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
given = dict(query)
q = lambda s: urllib.parse.quote(s, safe="-_.~")
canonical_query = "&".join(f"{q(k)}={q(v)}" for k, v in sorted(query) if k != "X-Amz-Signature")
headers = {"host": parts.netloc, "x-k8s-aws-id": sys.argv[3]}
signed = given["X-Amz-SignedHeaders"]
canonical_headers = "".join(f"{h}:{headers[h]}\n" for h in signed.split(";"))
request = "\n".join(["GET", parts.path or "/", canonical_query, canonical_headers, signed, hashlib.sha256(b"").hexdigest()])
scope = given["X-Amz-Credential"].split("/", 1)[1]
date, region, service, _ = scope.split("/")
to_sign = "\n".join(["AWS4-HMAC-SHA256", given["X-Amz-Date"], scope, hashlib.sha256(request.encode()).hexdigest()])
key = ("AWS4" + secret).encode()
for part in (date, region, service, "aws4_request"):
    key = hmac.new(key, part.encode(), hashlib.sha256).digest()
given["recomputed"] = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
given["endpoint"] = f"{parts.scheme}://{parts.netloc}{parts.path}"
print(json.dumps(given))
"#;

#[test]
fn an_eks_token_is_made_where_it_is_used_and_signed_as_sts_checks_it() {
    let m = moto();
    let dir = std::env::temp_dir().join(format!("strata-eks-auth-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.tf"), CONFIG).unwrap();
    let mut apply = Command::new(env!("CARGO_BIN_EXE_strata"));
    apply
        .current_dir(&dir)
        .args(["apply", "-auto-approve", "-no-color"]);
    env_for(&mut apply, &m);
    let out = apply.output().unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("ephemeral.aws_eks_cluster_auth.gpu: Opening...")
            && said.contains("ephemeral.aws_eks_cluster_auth.gpu: Closing..."),
        "{said}"
    );
    let token = std::fs::read_to_string(dir.join("token.txt")).unwrap();
    // Kept nowhere: not in the state, not in what was said.
    let state = std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap();
    assert!(
        !state.contains("k8s-aws-v1") && !said.contains(&token),
        "{said}"
    );

    let verified = Command::new("python3")
        .args(["-c", VERIFY, &token, "testing", "gpu-cluster"])
        .output()
        .unwrap();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );
    let q: serde_json::Value = serde_json::from_slice(&verified.stdout).unwrap();
    assert_eq!(q["Action"], "GetCallerIdentity");
    assert_eq!(q["Version"], "2011-06-15");
    assert_eq!(q["X-Amz-Expires"], "60");
    assert_eq!(q["X-Amz-SignedHeaders"], "host;x-k8s-aws-id");
    let credential = q["X-Amz-Credential"].as_str().unwrap();
    assert!(
        credential.starts_with("testing/") && credential.ends_with("/us-east-1/sts/aws4_request"),
        "{credential}"
    );
    assert_eq!(q["X-Amz-Signature"], q["recomputed"], "{q}");
    // STS is reached where the SDK reaches it (AWS_ENDPOINT_URL here).
    assert_eq!(q["endpoint"], format!("{}/", m.url));
    let _ = std::fs::remove_dir_all(&dir);
}
