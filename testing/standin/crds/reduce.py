#!/usr/bin/env python3
"""Reduces a project's published CustomResourceDefinitions to what the
Kubernetes stand-in checks objects against, and writes them as one JSON
file with where they came from.

    reduce.py [--compact] REPO GIT_DIR TAG PATH OUT KIND...

REPO is the project's repository (owner/name), GIT_DIR a clone (bare is enough) of the project, TAG the release, PATH
the folder of CRD YAML files at that tag, KIND the kinds kept (plural.group
file names are matched by the kind's lower-case plural). Kept of each
served version's `openAPIV3Schema`: the structure (type, properties,
items, additionalProperties, required, nullable, int-or-string,
preserve-unknown-fields) and the value rules the stand-in enforces (enum,
format, pattern, lengths, counts, bounds). Dropped: descriptions (prose),
CEL rules (`x-kubernetes-validations`: the stand-in does not evaluate
CEL), list and map merge types, defaults. `--compact` writes one line
(KubeRay's CRDs embed the pod template schema several times over).
"""
import json, subprocess, sys
import yaml

KEEP = {
    "type", "properties", "items", "additionalProperties", "required", "nullable",
    "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
    "enum", "format", "pattern", "maxLength", "minLength", "maxItems", "minItems",
    "maxProperties", "minProperties", "minimum", "maximum",
}


def reduce_schema(s):
    out = {}
    for k, v in s.items():
        if k not in KEEP:
            continue
        if k == "properties":
            v = {name: reduce_schema(p) for name, p in v.items()}
        elif k in ("items", "additionalProperties") and isinstance(v, dict):
            v = reduce_schema(v)
        out[k] = v
    return out


def main():
    args = sys.argv[1:]
    compact = bool(args) and args[0] == "--compact"
    repo, git_dir, tag, path, out, *kinds = args[1:] if compact else args
    files = subprocess.run(["git", "-C", git_dir, "ls-tree", "--name-only", f"{tag}:{path}"],
                           check=True, capture_output=True, text=True).stdout.split()
    crds = []
    for f in sorted(files):
        text = subprocess.run(["git", "-C", git_dir, "show", f"{tag}:{path}/{f}"],
                              check=True, capture_output=True, text=True).stdout
        crd = yaml.safe_load(text)
        spec = crd["spec"]
        if spec["names"]["kind"] not in kinds:
            continue
        crds.append({
            "group": spec["group"],
            "scope": spec["scope"],
            "names": {k: spec["names"][k] for k in ("kind", "plural", "singular") if k in spec["names"]},
            "versions": [{
                "name": v["name"],
                "served": v["served"],
                "storage": v["storage"],
                "schema": reduce_schema(v["schema"]["openAPIV3Schema"]),
            } for v in spec["versions"] if v["served"]],
        })
    missing = set(kinds) - {c["names"]["kind"] for c in crds}
    if missing:
        sys.exit(f"no CRD for {sorted(missing)} in {path} at {tag}")
    commit = subprocess.run(["git", "-C", git_dir, "rev-list", "-n1", tag],
                            check=True, capture_output=True, text=True).stdout.strip()
    doc = {"source": {"repository": repo, "tag": tag, "commit": commit, "path": path,
                      "reduced_by": "testing/standin/crds/reduce.py"},
           "crds": crds}
    with open(out, "w") as f:
        if compact:
            json.dump(doc, f, separators=(",", ":"), sort_keys=True)
        else:
            json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
