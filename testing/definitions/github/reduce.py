"""Reduces GitHub's REST API description (OpenAPI 3.0) to what the GitHub
stand-in's checks need, in the same form as testing/definitions/google:
for each operation strata's `comment` command calls, its HTTP method, path
template, request and response schema; for each schema those reach, its
fields with their types, formats, enums, alternatives (oneOf), what may be
null and what is required. Facts only: no descriptions or examples kept.

The description comes from the npm package @octokit/openapi, which
publishes github/rest-api-description's generated/api.github.com.json:

    (cd /tmp && npm pack @octokit/openapi@23.0.2)
    python3 testing/definitions/github/reduce.py /tmp/octokit-openapi-23.0.2.tgz
"""

import hashlib
import json
import os
import sys
import tarfile

OPERATIONS = [
    "issues/list-for-repo",
    "issues/create",
    "issues/update",
    "issues/list-comments",
    "issues/create-comment",
    "issues/update-comment",
    "issues/add-labels",
    "issues/remove-label",
]

# The error bodies the stand-in answers with, beside the operations'.
ERRORS = ["validation-error", "basic-error"]

KEYS = ("type", "format", "enum", "nullable")


def name_of(ref):
    return ref.rsplit("/", 1)[-1]


def schema(s):
    if "$ref" in s:
        return {"$ref": name_of(s["$ref"])}
    out = {k: s[k] for k in KEYS if k in s}
    parts = s.get("allOf")
    if parts:
        # An allOf of objects is one object with every part's fields.
        merged = {"type": "object", "properties": {}, "required": []}
        for p in parts:
            r = schema(p)
            if "$ref" in r:
                return {"all_of": [schema(x) for x in parts]}
            merged["properties"].update(r.get("properties", {}))
            merged["required"] += r.get("required", [])
        out.update(merged)
    for alt in ("oneOf", "anyOf"):
        if alt in s:
            out["one_of"] = [schema(x) for x in s[alt]]
    if "items" in s:
        out["items"] = schema(s["items"])
    if isinstance(s.get("additionalProperties"), dict):
        out["additional"] = schema(s["additionalProperties"])
    if "properties" in s:
        out["properties"] = {k: schema(v) for k, v in sorted(s["properties"].items())}
    if s.get("required"):
        out["required"] = sorted(s["required"])
    if s.get("readOnly"):
        out["read_only"] = True
    return out


def refs(v, found):
    if isinstance(v, dict):
        if isinstance(v.get("$ref"), str):
            found.add(v["$ref"])
        for x in v.values():
            refs(x, found)
    elif isinstance(v, list):
        for x in v:
            refs(x, found)


def body_schema(content):
    return (content or {}).get("application/json", {}).get("schema")


def main(package):
    here = os.path.dirname(os.path.abspath(__file__))
    sha = hashlib.sha256(open(package, "rb").read()).hexdigest()
    member = "package/generated/api.github.com.json"
    with tarfile.open(package) as t:
        doc = json.load(t.extractfile(member))
    methods, schemas = {}, {}
    for path, item in doc["paths"].items():
        for http, op in item.items():
            if not isinstance(op, dict) or op.get("operationId") not in OPERATIONS:
                continue
            oid = op["operationId"]
            m = {"http": http.upper(), "path": path.lstrip("/"), "request": None, "response": None}
            req = body_schema(op.get("requestBody", {}).get("content"))
            if req:
                schemas[f"{oid}:request"] = schema(req)
                m["request"] = f"{oid}:request"
            ok = [c for c in sorted(op["responses"]) if c.startswith("2")]
            res = body_schema(op["responses"][ok[0]].get("content")) if ok else None
            if res:
                schemas[f"{oid}:response"] = schema(res)
                m["response"] = f"{oid}:response"
            methods[oid] = m
    todo = set()
    refs(schemas, todo)
    todo = {name_of(r) for r in todo} | set(ERRORS)
    while todo:
        n = todo.pop()
        if n in schemas:
            continue
        schemas[n] = schema(doc["components"]["schemas"][n])
        more = set()
        refs(schemas[n], more)
        todo |= {name_of(r) for r in more} - set(schemas)
    out = {
        "source": {"package": os.path.basename(package), "sha256": sha, "document": member,
                   "version": doc["info"]["version"]},
        "methods": dict(sorted(methods.items())),
        "schemas": dict(sorted(schemas.items())),
    }
    path = os.path.join(here, "api.github.com.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{path}: {len(methods)} operations, {len(schemas)} schemas")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
