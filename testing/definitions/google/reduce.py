"""Reduces Google's API discovery documents to what the stand-ins' checks
need: for each method of the resources strata's GCP driver calls, its HTTP
method, path template, request and response schema; for each schema those
reach, its fields with their types, formats, enums and whether the server
alone sets them (readOnly, or "[Output Only]" in the description, as
compute's document says it). Facts only: no descriptions are kept.

The documents come from google-api-python-client's wheel on PyPI, which
carries Google's published discovery documents
(googleapiclient/discovery_cache/documents/API.VERSION.json):

    pip download --no-deps google-api-python-client==2.202.0 -d /tmp/g
    python3 testing/definitions/google/reduce.py /tmp/g/google_api_python_client-2.202.0-py3-none-any.whl

writes testing/definitions/google/API.VERSION.json for each API below.
"""

import hashlib
import json
import os
import sys
import zipfile

# The API documents and, per API, the resource paths whose methods the
# driver calls (a prefix of the method ids).
APIS = {
    "compute.v1": [
        "compute.networks.",
        "compute.subnetworks.",
        "compute.firewalls.",
        "compute.routers.",
        "compute.globalOperations.",
        "compute.regionOperations.",
        "compute.zoneOperations.",
        # A GKE node pool's nodes: its size is read from its group.
        "compute.instanceGroupManagers.",
        # Placement scores: how obtainable a pool's machines are.
        "compute.advice.capacity",
        # Reservations a pool's `reserved "gcp"` names (made by the tests as
        # a user makes them; the driver reads them).
        "compute.reservations.",
    ],
    "container.v1": [
        "container.projects.locations.clusters.",
        "container.projects.locations.operations.",
    ],
    "iam.v1": ["iam.projects.serviceAccounts."],
    "cloudresourcemanager.v1": [
        "cloudresourcemanager.projects.getIamPolicy",
        "cloudresourcemanager.projects.setIamPolicy",
        "cloudresourcemanager.projects.get",
    ],
    # Cloud NAT's egress (`router.googleapis.com/nat/sent_bytes_count`),
    # read for `strata report`.
    "monitoring.v3": ["monitoring.projects.timeSeries.list"],
    "storage.v1": [
        "storage.buckets.",
        "storage.objects.",
        "storage.projects.hmacKeys.",
    ],
}

FIELD_KEYS = ("type", "format", "enum", "$ref")


def field(f):
    out = {k: f[k] for k in FIELD_KEYS if k in f}
    # Set by the server alone: marked readOnly, or (older documents,
    # compute's) said so at the start of the field's description.
    said = f.get("description", "").lstrip().lower()
    if f.get("readOnly") or said.startswith(("[output only]", "output only")):
        out["read_only"] = True
    if "items" in f:
        out["items"] = field(f["items"])
    if "additionalProperties" in f:
        out["additional"] = field(f["additionalProperties"])
    if "properties" in f:
        out["properties"] = {k: field(v) for k, v in sorted(f["properties"].items())}
    return out


def methods(resources, out):
    for r in resources.values():
        for m in r.get("methods", {}).values():
            out.append(m)
        methods(r.get("resources", {}), out)
    return out


def refs(f, found):
    if isinstance(f, dict):
        if "$ref" in f:
            found.add(f["$ref"])
        for v in f.values():
            refs(v, found)
    elif isinstance(f, list):
        for v in f:
            refs(v, found)


def reduce(doc, wanted):
    kept = {}
    for m in methods(doc.get("resources", {}), []):
        if not any(m["id"].startswith(w) for w in wanted):
            continue
        params = {
            k: {x: p[x] for x in ("location", "type", "required", "enum") if x in p}
            for k, p in sorted(m.get("parameters", {}).items())
        }
        kept[m["id"]] = {
            "http": m["httpMethod"],
            "path": m.get("flatPath", m["path"]),
            "parameters": params,
            "request": m.get("request", {}).get("$ref"),
            "response": m.get("response", {}).get("$ref"),
        }
    schemas = {}
    todo = {m[k] for m in kept.values() for k in ("request", "response") if m[k]}
    while todo:
        name = todo.pop()
        if name in schemas or name not in doc["schemas"]:
            continue
        schemas[name] = field(doc["schemas"][name])
        more = set()
        refs(schemas[name], more)
        todo |= more - set(schemas)
    return kept, dict(sorted(schemas.items()))


def main(wheel):
    here = os.path.dirname(os.path.abspath(__file__))
    sha = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
    with zipfile.ZipFile(wheel) as z:
        for api, wanted in APIS.items():
            name = f"googleapiclient/discovery_cache/documents/{api}.json"
            doc = json.loads(z.read(name))
            kept, schemas = reduce(doc, wanted)
            out = {
                "source": {
                    "package": os.path.basename(wheel),
                    "sha256": sha,
                    "document": name,
                    "revision": doc["revision"],
                },
                "service_path": doc["servicePath"],
                "methods": dict(sorted(kept.items())),
                "schemas": schemas,
            }
            path = os.path.join(here, f"{api}.json")
            with open(path, "w") as f:
                json.dump(out, f, indent=1, sort_keys=True)
                f.write("\n")
            print(f"{path}: {len(kept)} methods, {len(schemas)} schemas")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
