"""Reduces Azure's resource type definitions to what the Azure stand-in's
checks need, in the form of testing/definitions/google: for each resource
type and API version the driver writes, the schema of its body and every
schema that reaches (fields with their types, enums, what is required and
what only the service sets), and Azure's own request examples for each
(examples.json). Facts only: no descriptions kept.

Azure publishes its REST API specifications in Azure/azure-rest-api-specs
(over a gigabyte; no package registry carries them). Microsoft generates
from them, per resource type and API version, the type index of
Azure/bicep-types-az (generated/*/PROVIDER/VERSION/types.json), which is
where this reads them from, at a commit it records:

    python3 testing/definitions/azure/reduce.py /path/to/bicep-types-az.git [COMMIT]

The path is a git directory (a bare clone will do).
"""

import json
import os
import subprocess
import sys

# The resource types the driver writes, at the API versions it uses
# (providers/azure/src/arm).
RESOURCES = [
    "Microsoft.Resources/resourceGroups@2022-09-01",
    "Microsoft.Network/virtualNetworks@2024-05-01",
    "Microsoft.Network/virtualNetworks/subnets@2024-05-01",
    "Microsoft.Network/networkSecurityGroups@2024-05-01",
    "Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31",
    "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials@2023-01-31",
    "Microsoft.Authorization/roleAssignments@2022-04-01",
    "Microsoft.Authorization/locks@2020-05-01",
    "Microsoft.Storage/storageAccounts@2023-05-01",
    "Microsoft.Storage/storageAccounts/blobServices@2023-05-01",
    "Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01",
    "Microsoft.Storage/storageAccounts/managementPolicies@2023-05-01",
    "Microsoft.ContainerService/managedClusters@2025-01-01",
    "Microsoft.ContainerService/managedClusters/agentPools@2025-01-01",
    # Not written by the driver but read by it (a pool's `reserved "azure"`
    # names a group): the tests make them as a user would.
    "Microsoft.Compute/capacityReservationGroups@2024-11-01",
    "Microsoft.Compute/capacityReservationGroups/capacityReservations@2024-11-01",
]

# The type index's property flags.
REQUIRED, READ_ONLY, DEPLOY_TIME_CONSTANT = 1, 2, 8

# A body's fields that a REST call carries in its URL or ARM ignores in
# a PUT (the index has them for Bicep, which sends them).
ENVELOPE = {"id", "name", "type", "apiVersion"}


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], check=True,
                          capture_output=True, text=True).stdout


def find(repo, commit, resource):
    """The types.json holding `resource`, and its index there."""
    version = resource.rsplit("@", 1)[1]
    provider = resource.split("/", 1)[0].lower()
    names = git(repo, "ls-tree", "-r", "--name-only", commit, "generated").split()
    for path in names:
        if not path.endswith(f"/{provider}/{version}/types.json"):
            continue
        types = json.loads(git(repo, "show", f"{commit}:{path}"))
        for i, t in enumerate(types):
            if t.get("$type") == "ResourceType" and t.get("name") == resource:
                return path, types, t["body"]["$ref"]
    sys.exit(f"{resource}: not in {commit}")


class Reducer:
    def __init__(self):
        self.schemas = {}

    def name(self, tag, ref):
        return f"{tag}#{ref.lstrip('#/')}"

    def ref(self, tag, types, ref):
        """The schema `ref` names in `types`, reduced under `tag`; its name."""
        n = self.name(tag, ref)
        if n not in self.schemas:
            self.schemas[n] = {}
            self.schemas[n] = self.reduce(tag, types, types[int(ref.lstrip("#/"))])
        return n

    def field(self, tag, types, p, envelope):
        out = {"$ref": self.ref(tag, types, p["type"]["$ref"])}
        if p.get("flags", 0) & READ_ONLY and not envelope:
            out["read_only"] = True
        return out

    def object(self, tag, types, props, extra=None, top=False):
        out = {"type": "object", "properties": {}}
        required = []
        for k, p in sorted(props.items()):
            envelope = top and k in ENVELOPE
            out["properties"][k] = self.field(tag, types, p, envelope)
            flags = p.get("flags", 0)
            if flags & REQUIRED and not envelope and not flags & DEPLOY_TIME_CONSTANT:
                required.append(k)
        if required:
            out["required"] = required
        if extra:
            out["additional"] = {"$ref": self.ref(tag, types, extra["$ref"])}
        return out

    def reduce(self, tag, types, t):
        kind = t["$type"]
        if kind == "ObjectType":
            return self.object(tag, types, t.get("properties", {}), t.get("additionalProperties"))
        if kind == "DiscriminatedObjectType":
            # One alternative per kind, each the base fields with its own.
            alternatives = []
            for key, ref in sorted(t["elements"].items()):
                element = types[int(ref["$ref"].lstrip("#/"))]
                merged = dict(t.get("baseProperties", {}))
                merged.update(element.get("properties", {}))
                o = self.object(tag, types, merged)
                o["properties"][t["discriminator"]] = {"type": "string", "enum": [key]}
                alternatives.append(o)
            return {"one_of": alternatives}
        if kind == "UnionType":
            elements = [types[int(e["$ref"].lstrip("#/"))] for e in t["elements"]]
            if all(e["$type"] == "StringLiteralType" for e in elements):
                return {"type": "string", "enum": sorted({e["value"] for e in elements})}
            if any(e["$type"] == "StringType" for e in elements):
                # Azure's extensible enums take any string.
                return {"type": "string"}
            return {"one_of": [{"$ref": self.ref(tag, types, e["$ref"])} for e in t["elements"]]}
        if kind == "StringLiteralType":
            return {"type": "string", "enum": [t["value"]]}
        if kind == "StringType":
            return {"type": "string"}
        if kind == "IntegerType":
            return {"type": "integer"}
        if kind == "BooleanType":
            return {"type": "boolean"}
        if kind == "ArrayType":
            return {"type": "array", "items": {"$ref": self.ref(tag, types, t["itemType"]["$ref"])}}
        if kind == "AnyType":
            return {}
        sys.exit(f"unknown type kind {kind}")


def value(text):
    """A scalar of a Bicep object literal: a string, number or literal."""
    if text.startswith("'") and text.endswith("'") and len(text) >= 2:
        return text[1:-1].replace("\\'", "'")
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    try:
        return int(text)
    except ValueError:
        return float(text)


def literal(lines):
    """The body of a Bicep resource sample (its lines inside the outer
    braces) as JSON: `key: value` lines, nested `{`/`[` blocks, one array
    item per line. `parent` and `scope` (references, not body) are left
    out. Raises ValueError for anything else."""
    stack = [({}, None)]
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        top, _ = stack[-1]
        if line in ("}", "]"):
            done, key = stack.pop()
            parent = stack[-1][0]
            if isinstance(parent, list):
                parent.append(done)
            else:
                parent[key] = done
            continue
        if isinstance(top, list):
            key, rest = None, line
        else:
            key, _, rest = line.partition(":")
            key, rest = key.strip().strip("'"), rest.strip()
        if rest in ("{", "["):
            stack.append(({} if rest == "{" else [], key))
            continue
        if key in ("parent", "scope") and not rest.startswith("'"):
            continue
        v = value(rest)
        if isinstance(top, list):
            top.append(v)
        else:
            top[key] = v
    if len(stack) != 1:
        raise ValueError("unbalanced")
    return stack[0][0]


def samples(repo, commit, path, resource):
    """Azure's own request examples for `resource`, from the samples.md
    beside its types.json (Microsoft renders each example's body there):
    (title, body) pairs; examples the parser cannot read are counted."""
    text = git(repo, "show", f"{commit}:{path.replace('types.json', 'samples.md')}")
    section = "## " + resource.split("@")[0].lower()
    out, unread = [], 0
    lines = text.split("\n")
    inside = False
    for i, line in enumerate(lines):
        if line.startswith("## "):
            inside = line.strip() == section
        if not inside or not line.startswith(f"resource exampleResource '{resource}'"):
            continue
        title = lines[i - 2].strip()
        end = lines.index("}", i)
        try:
            body = literal(lines[i + 1:end])
        except ValueError:
            unread += 1
            continue
        out.append({"title": title, "body": body})
    return out, unread


def main(repo, commit):
    commit = git(repo, "rev-parse", commit).strip()
    r = Reducer()
    resources, files, examples, unread = {}, set(), {}, 0
    for resource in RESOURCES:
        path, types, body = find(repo, commit, resource)
        files.add(path)
        found, missed = samples(repo, commit, path, resource)
        examples[resource] = found
        unread += missed
        tag = path.split("/")[1] + "/" + path.split("/")[3]
        t = types[int(body.lstrip("#/"))]
        name = f"{resource}:body"
        r.schemas[name] = r.object(tag, types, t.get("properties", {}), top=True)
        resources[resource.lower()] = name
    here = os.path.dirname(os.path.abspath(__file__))
    out = {
        "source": {"repository": "Azure/bicep-types-az", "commit": commit, "files": sorted(files)},
        "resources": resources,
        "schemas": dict(sorted(r.schemas.items())),
    }
    path = os.path.join(here, "resources.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{path}: {len(resources)} resource types, {len(r.schemas)} schemas")
    path = os.path.join(here, "examples.json")
    with open(path, "w") as f:
        json.dump({"source": out["source"], "examples": examples}, f, indent=1, sort_keys=True)
        f.write("\n")
    count = sum(len(v) for v in examples.values())
    print(f"{path}: {count} examples ({unread} unread)")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "HEAD")
