"""Reduces Kubernetes' API definitions to what the Kubernetes stand-in's
checks need: for each built-in kind it serves, the definition of the
object and every definition that reaches, as structural schemas in the
form a CRD's openAPIV3Schema takes (types, required fields, enums, maps,
lists, int-or-string, what may be null), references kept by name. Facts
only: no descriptions kept.

Kubernetes publishes its OpenAPI in kubernetes/kubernetes (api/openapi-spec);
the PyPI package kubernetes-validate carries its definitions per release,
converted to JSON Schema (one _definitions.json per version), which is
where this reads them from:

    pip download --no-deps kubernetes-validate==1.37.0 -d /tmp
    python3 testing/definitions/kubernetes/reduce.py \\
        /tmp/kubernetes_validate-1.37.0-py3-none-any.whl v1.33.0

The version is the stand-in's API server version (v1.33).
"""

import hashlib
import json
import os
import sys
import zipfile

# The built-in kinds the stand-in serves (testing/standin/src/kubernetes.rs).
KINDS = [
    ("v1", "Namespace"),
    ("v1", "Node"),
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
    ("v1", "ServiceAccount"),
    ("v1", "Service"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
]

PREFIX = "#/$defs/"


def types_of(t):
    """A JSON Schema type (one or a list) as its types and whether null is one."""
    ts = t if isinstance(t, list) else [t]
    return [x for x in ts if x != "null"], "null" in ts


def schema(s):
    if "$ref" in s:
        return {"$ref": s["$ref"][len(PREFIX):]}
    out = {}
    alternatives = s.get("oneOf")
    if alternatives and all(set(a) == {"type"} for a in alternatives):
        # A scalar of one of a few types: IntOrString, Quantity.
        found, nullable = [], False
        for a in alternatives:
            ts, n = types_of(a["type"])
            found += ts
            nullable |= n
        if sorted(found) == ["integer", "string"]:
            out["x-kubernetes-int-or-string"] = True
        else:
            out["type"] = sorted(found)
        if nullable:
            out["nullable"] = True
        return out
    if "type" in s:
        ts, nullable = types_of(s["type"])
        if len(ts) == 1:
            out["type"] = ts[0]
        elif ts:
            out["type"] = sorted(ts)
        if nullable:
            out["nullable"] = True
    if s.get("format") == "int-or-string":
        out["x-kubernetes-int-or-string"] = True
    for k in ("enum", "x-kubernetes-preserve-unknown-fields"):
        if k in s:
            out[k] = s[k]
    if "items" in s:
        out["items"] = schema(s["items"])
    if isinstance(s.get("additionalProperties"), dict):
        out["additionalProperties"] = schema(s["additionalProperties"])
    if "properties" in s:
        out["properties"] = {k: schema(v) for k, v in sorted(s["properties"].items())}
    if s.get("required"):
        out["required"] = sorted(s["required"])
    return out


def refs(v, found):
    if isinstance(v, dict):
        if isinstance(v.get("$ref"), str) and v["$ref"].startswith(PREFIX):
            found.add(v["$ref"][len(PREFIX):])
        for x in v.values():
            refs(x, found)
    elif isinstance(v, list):
        for x in v:
            refs(x, found)


def main(package, version):
    here = os.path.dirname(os.path.abspath(__file__))
    sha = hashlib.sha256(open(package, "rb").read()).hexdigest()
    member = f"kubernetes_validate/kubernetes-json-schema/{version}-local/_definitions.json"
    with zipfile.ZipFile(package) as z:
        defs = json.load(z.open(member))["$defs"]
    kinds = {}
    for api_version, kind in KINDS:
        group, _, v = api_version.rpartition("/")
        name = next(
            n
            for n, d in defs.items()
            if {"group": group, "version": v, "kind": kind}
            in d.get("x-kubernetes-group-version-kind", [])
        )
        kinds[f"{api_version}/{kind}"] = name
    schemas, todo = {}, set(kinds.values())
    while todo:
        n = todo.pop()
        schemas[n] = schema(defs[n])
        more = set()
        refs(defs[n], more)
        todo |= more - set(schemas)
    out = {
        "source": {
            "package": os.path.basename(package),
            "sha256": sha,
            "document": member,
            "version": version,
        },
        "kinds": kinds,
        "schemas": dict(sorted(schemas.items())),
    }
    path = os.path.join(here, f"{version}.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{path}: {len(kinds)} kinds, {len(schemas)} schemas")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
