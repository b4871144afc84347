//! Server-side apply as the API server does it: the fields each manager
//! owns (`managedFields`), conflicts between managers, an apply merged
//! into the live object, and a create, replace or merge patch taking the
//! fields it changed.

use super::*;

impl Store {
    /// Server-side apply of `applied` by `manager`.
    pub(super) fn apply(
        &mut self,
        t: &Target,
        applied: Json,
        manager: &str,
        force: bool,
    ) -> Result<Json, Failure> {
        let name = t.name.clone().unwrap_or_default();
        if applied["apiVersion"] != json!(t.kind.api_version())
            || applied["kind"] != json!(t.kind.kind)
        {
            return Err(invalid(
                t,
                &name,
                &format!(
                    "apiVersion and kind must be {} and {}: the apply patch says {} and {}",
                    t.kind.api_version(),
                    t.kind.kind,
                    applied["apiVersion"],
                    applied["kind"]
                ),
            ));
        }
        if applied["metadata"]["name"] != json!(name) {
            return Err(invalid(t, &name, "metadata.name: Invalid value: the name of the object does not match the name on the URL"));
        }
        let exists = self.objects.contains_key(&t.key());
        let mut obj = self.objects.get(&t.key()).cloned().unwrap_or_else(|| {
            json!({"apiVersion": t.kind.api_version(), "kind": t.kind.kind,
                   "metadata": {"name": name}})
        });
        if t.kind.namespaced {
            obj["metadata"]["namespace"] = json!(t.namespace);
        }
        let mut owners = owners(&obj);
        let mine = fields(&applied, t.status);
        let mut conflicts = Vec::new();
        for (other, (op, theirs)) in owners.iter_mut() {
            if other == manager && op == "Apply" {
                continue;
            }
            for p in &mine {
                if theirs.contains(p) && at(&obj, p) != at(&applied, p) {
                    if force {
                        theirs.remove(p);
                    } else {
                        conflicts.push((other.clone(), p.clone()));
                    }
                }
            }
        }
        if !conflicts.is_empty() {
            let list: Vec<String> = conflicts
                .iter()
                .map(|(m, p)| format!("conflict with \"{m}\": .{}", p.join(".")))
                .collect();
            let message = if list.len() == 1 {
                format!("Apply failed with 1 conflict: {}", list[0])
            } else {
                format!(
                    "Apply failed with {} conflicts: {}",
                    list.len(),
                    list.join("\n")
                )
            };
            return Err((409, "Conflict".into(), message));
        }
        let before = owners
            .remove(manager)
            .filter(|(op, _)| op == "Apply")
            .map(|(_, f)| f)
            .unwrap_or_default();
        for gone in before.difference(&mine) {
            if !owners.values().any(|(_, f)| f.contains(gone)) {
                remove(&mut obj, gone);
            }
        }
        for p in &mine {
            set(&mut obj, p, at(&applied, p).cloned().unwrap_or(Json::Null));
        }
        owners.insert(manager.to_string(), ("Apply".into(), mine));
        if !exists {
            self.validate_new(t, &obj)?;
        }
        conforms(t, &obj)?;
        Ok(self.store(t, obj, owners))
    }

    /// A create, replace or merge patch by `manager`: it takes the fields
    /// whose value it changed (an update never conflicts).
    pub(super) fn write(
        &mut self,
        t: &Target,
        mut obj: Json,
        manager: &str,
    ) -> Result<Json, Failure> {
        let live = self.objects.get(&t.key()).cloned();
        if live.is_none() {
            self.validate_new(t, &obj)?;
        }
        conforms(t, &obj)?;
        if t.kind.namespaced {
            obj["metadata"]["namespace"] = json!(t.namespace);
        }
        let mut owners = owners(live.as_ref().unwrap_or(&Json::Null));
        let now = fields(&obj, t.status);
        let changed: BTreeSet<Path> = now
            .iter()
            .filter(|p| live.as_ref().and_then(|l| at(l, p)) != at(&obj, p))
            .cloned()
            .collect();
        // A status write leaves the rest's owners alone, and the other way round.
        let in_scope = |p: &Path| (p.first().map(String::as_str) == Some("status")) == t.status;
        for (_, (_, f)) in owners.iter_mut() {
            f.retain(|p| !in_scope(p) || (now.contains(p) && !changed.contains(p)));
        }
        let entry = owners
            .entry(manager.to_string())
            .or_insert_with(|| ("Update".into(), BTreeSet::new()));
        entry.1.extend(changed);
        Ok(self.store(t, obj, owners))
    }
}

/// Field manager → (operation, the leaf paths it owns).
pub(super) type Owners = BTreeMap<String, (String, BTreeSet<Path>)>;

pub(super) fn owners(obj: &Json) -> Owners {
    let mut out = Owners::new();
    for e in obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let mut paths = BTreeSet::new();
        from_fields_v1(&e["fieldsV1"], &mut Vec::new(), &mut paths);
        out.insert(
            e["manager"].as_str().unwrap_or_default().to_string(),
            (
                e["operation"].as_str().unwrap_or("Update").to_string(),
                paths,
            ),
        );
    }
    out
}

pub(super) fn managed_fields(owners: &Owners, api_version: &str) -> Json {
    Json::Array(
        owners
            .iter()
            .filter(|(_, (_, f))| !f.is_empty())
            .map(|(m, (op, f))| {
                json!({"manager": m, "operation": op, "apiVersion": api_version,
                       "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                       "fieldsV1": to_fields_v1(f)})
            })
            .collect(),
    )
}

/// `{"f:metadata": {"f:labels": {"f:a": {}}}}` for `metadata.labels.a`.
pub(super) fn to_fields_v1(paths: &BTreeSet<Path>) -> Json {
    fn insert(node: &mut Map<String, Json>, p: &[String]) {
        if let Some((head, tail)) = p.split_first() {
            let sub = node.entry(format!("f:{head}")).or_insert_with(|| json!({}));
            if let Some(m) = sub.as_object_mut() {
                insert(m, tail);
            }
        }
    }
    let mut root = Map::new();
    for p in paths {
        insert(&mut root, p);
    }
    Json::Object(root)
}

pub(super) fn from_fields_v1(v: &Json, prefix: &mut Path, out: &mut BTreeSet<Path>) {
    let Some(m) = v.as_object() else { return };
    if m.is_empty() && !prefix.is_empty() {
        out.insert(prefix.clone());
        return;
    }
    for (k, sub) in m {
        if let Some(name) = k.strip_prefix("f:") {
            prefix.push(name.to_string());
            from_fields_v1(sub, prefix, out);
            prefix.pop();
        }
    }
}

/// The leaf paths an object sets: maps are walked, anything else (lists
/// too) is one field. Identity and server fields are nobody's; `status`
/// belongs to the status subresource.
pub(super) fn fields(obj: &Json, status: bool) -> BTreeSet<Path> {
    fn walk(v: &Json, p: &mut Path, out: &mut BTreeSet<Path>) {
        match v.as_object() {
            Some(m) if !m.is_empty() => {
                for (k, x) in m {
                    p.push(k.clone());
                    walk(x, p, out);
                    p.pop();
                }
            }
            _ => {
                out.insert(p.clone());
            }
        }
    }
    let mut out = BTreeSet::new();
    for (k, v) in obj.as_object().into_iter().flatten() {
        let keep = match k.as_str() {
            "apiVersion" | "kind" => false,
            "status" => status,
            _ => !status,
        };
        if !keep {
            continue;
        }
        if k == "metadata" {
            for (mk, mv) in v.as_object().into_iter().flatten() {
                if matches!(
                    mk.as_str(),
                    "labels" | "annotations" | "finalizers" | "ownerReferences"
                ) {
                    let mut p = vec!["metadata".to_string(), mk.clone()];
                    walk(mv, &mut p, &mut out);
                }
            }
            continue;
        }
        walk(v, &mut vec![k.clone()], &mut out);
    }
    out
}

pub(super) fn at<'a>(v: &'a Json, p: &[String]) -> Option<&'a Json> {
    p.iter().try_fold(v, |cur, s| cur.get(s))
}

pub(super) fn set(v: &mut Json, p: &[String], x: Json) {
    let Some((last, init)) = p.split_last() else {
        return;
    };
    let mut cur = v;
    for s in init {
        if !cur[s.as_str()].is_object() {
            cur[s.as_str()] = json!({});
        }
        cur = &mut cur[s.as_str()];
    }
    cur[last.as_str()] = x;
}

/// Removes the field at `p`, and maps it leaves empty.
pub(super) fn remove(v: &mut Json, p: &[String]) {
    let Some((first, rest)) = p.split_first() else {
        return;
    };
    let Some(m) = v.as_object_mut() else { return };
    if rest.is_empty() {
        m.remove(first);
        return;
    }
    if let Some(sub) = m.get_mut(first) {
        remove(sub, rest);
        if sub.as_object().is_some_and(Map::is_empty) && first != "metadata" {
            m.remove(first);
        }
    }
}

/// RFC 7386.
pub(super) fn merge_patch(target: &mut Json, patch: &Json) {
    match patch.as_object() {
        Some(p) => {
            if !target.is_object() {
                *target = json!({});
            }
            for (k, v) in p {
                if v.is_null() {
                    if let Some(m) = target.as_object_mut() {
                        m.remove(k);
                    }
                } else {
                    merge_patch(&mut target[k.as_str()], v);
                }
            }
        }
        None => *target = patch.clone(),
    }
}
