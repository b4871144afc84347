#!/usr/bin/env python3
"""A stand-in `helm` for strata's tests only: no chart is fetched or
rendered. It speaks to the cluster of the kubeconfig it is given (a JSON
kubeconfig with a token, as the stand-in API server makes) and keeps
releases the way Helm 3 does, as Secrets `sh.helm.release.v1.NAME.vN`
(type helm.sh/release.v1, labels owner/name/status/version, data.release
= base64 of gzipped JSON), so that what reads them reads real records.

For the chart `gpu-operator` it also does what the chart's templates do
that matters to strata: the ClusterPolicy CRD and a ClusterPolicy
`cluster-policy` whose spec comes from the values. A chart whose CRDs
are kept in ../crds (`CHART-VERSION.json`, reduced from the project's
published CRDs by crds/reduce.py: Kueue's and KubeRay's) has them installed, with their
schemas, so the API server stand-in holds custom resources to them; a
version the stand-in has no CRDs for is refused, so a test never runs on
CRDs it did not mean.

Every call is appended as a JSON line to $STANDIN_HELM_LOG when set.
$STANDIN_HELM_FAIL=upgrade makes `upgrade` fail, as a broken chart would.
$STANDIN_HELM_REGISTRY=HOST=USER:PASSWORD makes the OCI registry HOST
private: `registry login` (password on stdin) records the credentials in
the --registry-config file as helm does, and an upgrade of a chart from
HOST is refused unless its --registry-config holds them.
"""
import base64, gzip, json, os, shutil, ssl, subprocess, sys, tempfile, urllib.error, urllib.parse, urllib.request

def die(msg):
    print("Error: " + msg, file=sys.stderr)
    sys.exit(1)

def parse(argv):
    flags, pos, i = {}, [], 0
    takes = {"--namespace", "-n", "--kubeconfig", "--kube-context", "--repo", "--version",
             "--values", "-f", "--timeout", "--set", "--output", "-o", "--username",
             "--password", "--registry-config"}
    while i < len(argv):
        a = argv[i]
        if "=" in a and a.startswith("--") and a.split("=", 1)[0] in takes:
            k, v = a.split("=", 1)
            flags.setdefault(k, []).append(v)
        elif a in takes:
            if i + 1 >= len(argv):
                die("flag needs an argument: " + a)
            flags.setdefault(a, []).append(argv[i + 1])
            i += 1
        elif a.startswith("-"):
            flags.setdefault(a, []).append(True)
        else:
            pos.append(a)
        i += 1
    return flags, pos

def one(flags, *names, default=None):
    for n in names:
        if n in flags:
            return flags[n][-1]
    return default

def exec_token(spec):
    """The token an exec credential plugin prints, as Helm's client-go
    would run it (command, args, env; ExecCredential on stdout)."""
    if not spec or not spec.get("command"):
        return None
    env = dict(os.environ)
    env["PATH"] = os.environ.get("STANDIN_HELM_PATH", env.get("PATH", ""))
    for e in spec.get("env") or []:
        env[e["name"]] = e["value"]
    try:
        command = shutil.which(spec["command"], path=env["PATH"]) or spec["command"]
        out = subprocess.run([command] + list(spec.get("args") or []),
                             capture_output=True, env=env, timeout=60, check=True).stdout
        return json.loads(out)["status"]["token"]
    except Exception as e:
        die("exec plugin %s failed: %s" % (spec["command"], e))

class Cluster:
    def __init__(self, path, context):
        if not path:
            die("no kubeconfig given (the stand-in needs --kubeconfig)")
        try:
            cfg = json.load(open(path))
        except Exception as e:
            die("kubeconfig %s is not JSON (the stand-in reads JSON kubeconfigs only): %s" % (path, e))
        ctx_name = context or cfg.get("current-context")
        ctx = next((c["context"] for c in cfg.get("contexts", []) if c["name"] == ctx_name), None)
        if ctx is None:
            die('context "%s" does not exist' % ctx_name)
        cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in cfg["users"] if u["name"] == ctx["user"])
        self.server = cluster["server"].rstrip("/")
        self.token = user.get("token") or exec_token(user.get("exec"))
        if not self.token:
            die("the stand-in helm takes token or exec-plugin credentials only")
        # As helm does: the kubeconfig's CA alone when it gives one (not
        # also the system's, where another CA of the same name may be).
        ca = cluster.get("certificate-authority-data")
        if ca:
            self.ssl = ssl.create_default_context(cadata=base64.b64decode(ca).decode())
        else:
            self.ssl = ssl.create_default_context()

    def call(self, method, path, body=None, ctype="application/json"):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, context=self.ssl, timeout=30) as r:
                text = r.read()
                return r.status, json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                return e.code, json.loads(text)
            except ValueError:
                return e.code, {"message": text.decode(errors="replace")}
        except urllib.error.URLError as e:
            die("Kubernetes cluster unreachable: %s" % e.reason)

    def must(self, method, path, body=None, ctype="application/json", ok=(200, 201)):
        code, out = self.call(method, path, body, ctype)
        if code not in ok:
            die("%s %s: %s" % (method, path, (out or {}).get("message", code)))
        return out

    def apply(self, path, obj):
        q = "?fieldManager=helm&force=true"
        return self.must("PATCH", path + q, obj, "application/apply-patch+yaml")

def secrets_path(ns):
    return "/api/v1/namespaces/%s/secrets" % urllib.parse.quote(ns)

def releases(cl, ns, name):
    code, out = cl.call("GET", secrets_path(ns) + "?labelSelector=" +
                        urllib.parse.quote("owner=helm,name=" + name))
    if code == 404:
        return []
    if code != 200:
        die("listing releases: %s" % out.get("message"))
    found = []
    for s in out.get("items", []):
        raw = base64.b64decode(base64.b64decode(s["data"]["release"]))
        found.append((int(s["metadata"]["labels"]["version"]), s, json.loads(gzip.decompress(raw))))
    return sorted(found, key=lambda r: r[0])

def encode(release):
    packed = base64.b64encode(gzip.compress(json.dumps(release).encode()))
    return base64.b64encode(packed).decode()

def set_path(values, dotted, raw):
    keys = dotted.split(".")
    cur = values
    for k in keys[:-1]:
        cur = cur.setdefault(k, {})
    v = raw
    if raw in ("true", "false"):
        v = raw == "true"
    else:
        try:
            v = int(raw)
        except ValueError:
            pass
    cur[keys[-1]] = v

def merge(base, over):
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            merge(base[k], v)
        else:
            base[k] = v
    return base

def gpu_operator(cl, values, version):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "clusterpolicies.nvidia.com"},
           "spec": {"group": "nvidia.com", "scope": "Cluster",
                    "names": {"plural": "clusterpolicies", "singular": "clusterpolicy", "kind": "ClusterPolicy"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    cl.apply("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusterpolicies.nvidia.com", crd)
    spec = {}
    for key in ("operator", "driver", "toolkit", "devicePlugin", "dcgmExporter", "mig", "migManager",
                "nodeStatusExporter", "gfd", "daemonsets"):
        if key in values:
            spec[key] = values[key]
    spec.setdefault("driver", {}).setdefault("enabled", True)
    policy = {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
              "metadata": {"name": "cluster-policy", "labels": {"app.kubernetes.io/version": version}},
              "spec": spec}
    cl.apply("/apis/nvidia.com/v1/clusterpolicies/cluster-policy", policy)

CRDS = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "crds")
CHARTS_WITH_CRDS = {"kueue", "kuberay-operator"}

def install_crds(cl, chart_name, version):
    """The chart's CRDs, as its templates would install them."""
    if chart_name not in CHARTS_WITH_CRDS:
        return
    path = os.path.join(CRDS, "%s-%s.json" % (chart_name, version.lstrip("v")))
    if not os.path.exists(path):
        die('chart "%s" version "%s" not found (the stand-in has CRDs for: %s)' % (
            chart_name, version, ", ".join(sorted(f for f in os.listdir(CRDS) if f.startswith(chart_name + "-")))))
    for c in json.load(open(path))["crds"]:
        name = "%s.%s" % (c["names"]["plural"], c["group"])
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": name},
               "spec": {"group": c["group"], "scope": c["scope"], "names": c["names"],
                        "versions": [{"name": v["name"], "served": v["served"], "storage": v["storage"],
                                      "schema": {"openAPIV3Schema": v["schema"]}} for v in c["versions"]]}}
        cl.apply("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name, crd)

def private_registry():
    """(host, "user:password") of the private registry, if there is one."""
    spec = os.environ.get("STANDIN_HELM_REGISTRY", "")
    host, _, creds = spec.partition("=")
    return (host, creds) if host else (None, None)

def registry_login(flags, pos):
    if len(pos) < 3:
        die('"helm registry login" requires 1 argument')
    host, user = pos[2], one(flags, "--username")
    if "--password-stdin" not in flags:
        die("the stand-in takes the password on stdin only")
    password = sys.stdin.read().strip()
    want_host, want = private_registry()
    if host == want_host and "%s:%s" % (user, password) != want:
        die("login attempt to https://%s/v2/ failed with status: 401 Unauthorized" % host)
    config = one(flags, "--registry-config")
    auths = {}
    if config and os.path.exists(config) and os.path.getsize(config) > 0:
        auths = json.load(open(config)).get("auths", {})
    auths[host] = {"auth": base64.b64encode(("%s:%s" % (user, password)).encode()).decode()}
    if config:
        with open(config, "w") as f:
            json.dump({"auths": auths}, f)
    print("Login Succeeded")

def check_registry(flags, chart):
    """Refuses a chart from the private registry without its login."""
    host, want = private_registry()
    if not host or not chart.startswith("oci://%s/" % host):
        return
    config = one(flags, "--registry-config")
    auths = {}
    if config and os.path.exists(config) and os.path.getsize(config) > 0:
        auths = json.load(open(config)).get("auths", {})
    given = base64.b64decode(auths.get(host, {}).get("auth", "")).decode()
    if given != want:
        die("failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://%s/v2/: 401 Unauthorized" % host)

def upgrade(flags, pos):
    if len(pos) < 3:
        die('"helm upgrade" requires 2 arguments')
    name, chart = pos[1], pos[2]
    check_registry(flags, chart)
    repo = one(flags, "--repo") or ""
    if repo.startswith("oci://"):
        die('looks like "%s" is not a valid chart repository or cannot be reached: '
            'an OCI chart is given by its full reference, not --repo' % repo)
    ns = one(flags, "--namespace", "-n", default="default")
    cl = Cluster(one(flags, "--kubeconfig"), one(flags, "--kube-context"))
    if os.environ.get("STANDIN_HELM_FAIL") == "upgrade":
        die("UPGRADE FAILED: the stand-in was told to fail")
    code, _ = cl.call("GET", "/api/v1/namespaces/" + urllib.parse.quote(ns))
    if code == 404:
        if "--create-namespace" not in flags:
            die('create: failed to create: namespaces "%s" not found' % ns)
        cl.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    history = releases(cl, ns, name)
    if not history and "--install" not in flags:
        die('"%s" has no deployed releases' % name)
    values = {}
    if "--reuse-values" in flags and history:
        values = json.loads(json.dumps(history[-1][2].get("config") or {}))
    for f in flags.get("--values", []) + flags.get("-f", []):
        try:
            merge(values, json.load(open(f)))
        except ValueError as e:
            die("values file %s is not JSON (the stand-in reads JSON only): %s" % (f, e))
    for s in flags.get("--set", []):
        for pair in s.split(","):
            k, _, v = pair.partition("=")
            set_path(values, k, v)
    chart_name = chart.rsplit("/", 1)[-1]
    version = one(flags, "--version") or (history[-1][2]["chart"]["metadata"]["version"] if history else "1.0.0")
    revision = history[-1][0] + 1 if history else 1
    for rev, secret, rel in history:
        if secret["metadata"]["labels"].get("status") == "deployed":
            rel["info"]["status"] = "superseded"
            patch = {"metadata": {"labels": {"status": "superseded"}}, "data": {"release": encode(rel)}}
            cl.must("PATCH", secrets_path(ns) + "/" + secret["metadata"]["name"], patch,
                    "application/merge-patch+json")
    if chart_name == "gpu-operator":
        gpu_operator(cl, values, version)
    install_crds(cl, chart_name, version)
    release = {"name": name, "namespace": ns, "version": revision, "config": values,
               "info": {"status": "deployed", "description": "Install complete" if revision == 1 else "Upgrade complete",
                        "first_deployed": "2026-01-01T00:00:00Z", "last_deployed": "2026-01-01T00:00:00Z"},
               "chart": {"metadata": {"name": chart_name, "version": version,
                                      "appVersion": version, "apiVersion": "v2"}},
               "manifest": ""}
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
              "metadata": {"name": "sh.helm.release.v1.%s.v%d" % (name, revision),
                           "labels": {"owner": "helm", "name": name, "status": "deployed",
                                      "version": str(revision)}},
              "data": {"release": encode(release)}}
    cl.must("POST", secrets_path(ns), secret)
    print('Release "%s" has been upgraded. Happy Helming!' % name)

def uninstall(flags, pos):
    if len(pos) < 2:
        die('"helm uninstall" requires at least 1 argument')
    name = pos[1]
    ns = one(flags, "--namespace", "-n", default="default")
    cl = Cluster(one(flags, "--kubeconfig"), one(flags, "--kube-context"))
    history = releases(cl, ns, name)
    if not history:
        die("uninstall: Release not loaded: %s: release: not found" % name)
    if history[-1][2]["chart"]["metadata"]["name"] == "gpu-operator":
        cl.call("DELETE", "/apis/nvidia.com/v1/clusterpolicies/cluster-policy")
    for _, secret, _ in history:
        cl.must("DELETE", secrets_path(ns) + "/" + secret["metadata"]["name"])
    print('release "%s" uninstalled' % name)

def get_values(flags, pos):
    name = pos[2]
    ns = one(flags, "--namespace", "-n", default="default")
    cl = Cluster(one(flags, "--kubeconfig"), one(flags, "--kube-context"))
    history = releases(cl, ns, name)
    if not history:
        die("release: not found")
    print(json.dumps(history[-1][2].get("config") or {}))

def main():
    argv = sys.argv[1:]
    log = os.environ.get("STANDIN_HELM_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"argv": argv}) + "\n")
    flags, pos = parse(argv)
    cmd = pos[0] if pos else ""
    if cmd == "version":
        print("v3.17.0+standin")
    elif cmd == "upgrade":
        upgrade(flags, pos)
    elif cmd == "registry" and len(pos) > 1 and pos[1] == "login":
        registry_login(flags, pos)
    elif cmd == "uninstall":
        uninstall(flags, pos)
    elif cmd == "get" and len(pos) > 2 and pos[1] == "values":
        get_values(flags, pos)
    else:
        die('unknown command "%s" for the stand-in helm' % cmd)

main()
