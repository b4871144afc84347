"""A checkpointing job as a training script would be written: its S3
client configured by the environment alone (the strata-checkpoints
Secret's keys), one checkpoint written and read back.

On EKS the Secret holds no keys: the pod identity agent gives the job's
service account a role. Where STRATA_TEST_POD_IDENTITY names a cluster,
this script first plays that agent for the test (which runs no pods): it
finds the service account's association through the EKS API, as
administrator, assumes the role and serves the credentials at
AWS_CONTAINER_CREDENTIALS_FULL_URI, as the agent does. The job's own
client knows nothing of that.

Prints one JSON line: what was written and read, where the credentials
came from, and (with STRATA_TEST_INSPECT_BUCKET) the bucket's versioning
and lifecycle as S3 reports them.
"""

import http.server
import json
import os
import sys
import threading

import boto3


def play_pod_identity_agent(spec):
    cluster, namespace, account = spec.split("/")
    admin = boto3.session.Session(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name=os.environ["AWS_REGION"],
    )
    endpoint = os.environ["STRATA_TEST_ADMIN_ENDPOINT"]
    eks = admin.client("eks", endpoint_url=endpoint)
    found = eks.list_pod_identity_associations(
        clusterName=cluster, namespace=namespace, serviceAccount=account
    )["associations"]
    if len(found) != 1:
        sys.exit(f"expected one association for {namespace}/{account}, found {found}")
    role = eks.describe_pod_identity_association(
        clusterName=cluster, associationId=found[0]["associationId"]
    )["association"]["roleArn"]
    creds = admin.client("sts", endpoint_url=endpoint).assume_role(
        RoleArn=role, RoleSessionName=f"eks-{cluster}-{account}"
    )["Credentials"]
    answer = json.dumps(
        {
            "AccessKeyId": creds["AccessKeyId"],
            "SecretAccessKey": creds["SecretAccessKey"],
            "Token": creds["SessionToken"],
            "Expiration": creds["Expiration"].isoformat(),
        }
    ).encode()

    class Agent(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Agent)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = (
        f"http://127.0.0.1:{server.server_port}/v1/credentials"
    )
    return role


def main():
    role = None
    spec = os.environ.pop("STRATA_TEST_POD_IDENTITY", None)
    if spec:
        role = play_pod_identity_agent(spec)
    # The job: nothing but the environment.
    s3 = boto3.client("s3")
    bucket = os.environ["BUCKET"]
    body = os.urandom(256 * 1024)
    s3.put_object(Bucket=bucket, Key="run-1/step-100.pt", Body=body)
    back = s3.get_object(Bucket=bucket, Key="run-1/step-100.pt")["Body"].read()
    # The bucket's settings through the S3 API, where the store has them
    # there (S3 itself; GCS shows them through its JSON API).
    versioning, rules = None, []
    if os.environ.pop("STRATA_TEST_INSPECT_BUCKET", None):
        versioning = s3.get_bucket_versioning(Bucket=bucket).get("Status")
        rules = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    print(
        json.dumps(
            {
                "same": back == body,
                "bytes": len(back),
                "credentials": s3._request_signer._credentials.method,
                "role": role,
                "versioning": versioning,
                "rules": rules,
            },
            default=str,
        )
    )


main()
