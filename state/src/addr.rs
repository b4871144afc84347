//! Addresses, parsed once and printed in Terraform's form: a module
//! instance's path (`module.a[0].module.b`), a resource in it
//! (`module.a[0].aws_vpc.main`), one instance of that resource
//! (`…aws_vpc.main["x"]`). The state writes them as text where Terraform
//! does; everything else holds them typed.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Managed,
    Data,
    /// An `ephemeral` block (Terraform 1.10): opened during a run, never
    /// kept. No state records one, but an object's dependencies may name
    /// one, as Terraform writes them.
    Ephemeral,
}

impl Mode {
    /// What an address writes before the type: `data.`, `ephemeral.`.
    pub fn prefix(self) -> &'static str {
        match self {
            Mode::Managed => "",
            Mode::Data => "data.",
            Mode::Ephemeral => "ephemeral.",
        }
    }
}

/// An instance key: `count` gives numbers, `for_each` gives strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InstanceKey {
    Int(u64),
    Str(String),
}

impl fmt::Display for InstanceKey {
    /// `[0]` or `["a"]`, the key as an address writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceKey::Int(i) => write!(f, "[{i}]"),
            InstanceKey::Str(s) => write!(f, "[{}]", serde_json::Value::String(s.clone())),
        }
    }
}

/// One call on a module path, with the instance's key when it repeats.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleStep {
    pub call: String,
    pub key: Option<InstanceKey>,
}

/// The module instance a resource lives in: the calls from the root, each
/// with its key. Empty for the root module. A configuration's (static)
/// module path is the same type with no keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModulePath(Vec<ModuleStep>);

impl ModulePath {
    pub fn root() -> ModulePath {
        ModulePath(Vec::new())
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn steps(&self) -> &[ModuleStep] {
        &self.0
    }

    /// The instance `key` of call `call` inside this one.
    pub fn child(&self, call: &str, key: Option<InstanceKey>) -> ModulePath {
        let mut steps = self.0.clone();
        steps.push(ModuleStep {
            call: call.to_string(),
            key,
        });
        ModulePath(steps)
    }

    /// The calling module instance and the step to this one; `None` at the
    /// root.
    pub fn split_last(&self) -> Option<(ModulePath, &ModuleStep)> {
        let (last, parent) = self.0.split_last()?;
        Some((ModulePath(parent.to_vec()), last))
    }

    /// The same path with every instance key dropped: where in the
    /// configuration this instance comes from.
    pub fn without_keys(&self) -> ModulePath {
        ModulePath(
            self.0
                .iter()
                .map(|s| ModuleStep {
                    call: s.call.clone(),
                    key: None,
                })
                .collect(),
        )
    }

    /// Whether `prefix` is this path or one of its ancestors.
    pub fn starts_with(&self, prefix: &ModulePath) -> bool {
        self.0.starts_with(&prefix.0)
    }

    /// This path with its leading `prefix` replaced by `by`.
    pub fn replace_prefix(&self, prefix: &ModulePath, by: &ModulePath) -> Option<ModulePath> {
        let rest = self.0.strip_prefix(prefix.0.as_slice())?;
        Some(ModulePath(by.0.iter().chain(rest).cloned().collect()))
    }

    /// Parses `module.a[0].module.b`; the empty text is the root.
    pub fn parse(s: &str) -> Option<ModulePath> {
        let steps = split_steps(s)?;
        let (path, used) = module_steps(&steps);
        (used == steps.len()).then_some(path)
    }
}

impl From<Vec<ModuleStep>> for ModulePath {
    fn from(steps: Vec<ModuleStep>) -> ModulePath {
        ModulePath(steps)
    }
}

impl fmt::Display for ModulePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "module.{}", s.call)?;
            if let Some(k) = &s.key {
                write!(f, "{k}")?;
            }
        }
        Ok(())
    }
}

/// As the state writes it: `"module.a[0].module.b"`.
impl Serialize for ModulePath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ModulePath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ModulePath, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
        ModulePath::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("invalid module path {text:?}")))
    }
}

/// A resource: the module instance it is in, its mode, type and name.
/// With a keyless module path it names a resource of the configuration,
/// which is what state records as an instance's dependencies.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ResourceAddr {
    #[serde(default, skip_serializing_if = "ModulePath::is_root")]
    pub module: ModulePath,
    pub mode: Mode,
    #[serde(rename = "type")]
    pub type_name: String,
    pub name: String,
}

impl ResourceAddr {
    /// The address of one instance (`key`) or of the whole resource.
    pub fn instance(&self, key: Option<InstanceKey>) -> Address {
        Address {
            id: self.clone(),
            key,
        }
    }

    /// The address of one instance (`key`) or of the whole resource, as text.
    pub fn instance_address(&self, key: Option<&InstanceKey>) -> String {
        match key {
            Some(k) => format!("{self}{k}"),
            None => self.to_string(),
        }
    }

    /// The configuration's resource this one is an instance of: every
    /// module key dropped (`module.m.t.n`).
    pub fn config(&self) -> ResourceAddr {
        ResourceAddr {
            module: self.module.without_keys(),
            ..self.clone()
        }
    }

    /// `module.a.t.n`, `data.t.n`; `None` if it names an instance.
    pub fn parse(s: &str) -> Option<ResourceAddr> {
        let a = Address::parse(s)?;
        a.key.is_none().then_some(a.id)
    }

    /// `aws_vpc.main` or `data.aws_ami.gpu`: the address inside its module.
    pub fn local(&self) -> String {
        format!("{}{}.{}", self.mode.prefix(), self.type_name, self.name)
    }
}

impl fmt::Display for ResourceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.is_root() {
            write!(f, "{}.", self.module)?;
        }
        f.write_str(&self.local())
    }
}

/// A dependency as the state writes it, `module.m.t.n`.
pub mod as_text {
    use super::ResourceAddr;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(addrs: &[ResourceAddr], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(addrs.iter().map(ToString::to_string))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ResourceAddr>, D::Error> {
        Vec::<std::borrow::Cow<'de, str>>::deserialize(d)?
            .iter()
            .map(|t| {
                ResourceAddr::parse(t).ok_or_else(|| {
                    serde::de::Error::custom(format!("invalid resource address {t:?}"))
                })
            })
            .collect()
    }
}

/// One instance of a resource, or (no key) every instance of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address {
    pub id: ResourceAddr,
    /// `None` addresses every instance of the resource.
    pub key: Option<InstanceKey>,
}

impl Address {
    /// Parses `module.a[0].module.b["x"].data.t.n["k"]`, `t.n[0]` or `t.n`.
    pub fn parse(s: &str) -> Option<Address> {
        let steps = split_steps(s)?;
        let (module, i) = module_steps(&steps);
        let (mode, type_name, name, key) = match &steps[i..] {
            [Step::Name("data"), Step::Name(t), Step::Name(n), rest @ ..] => {
                (Mode::Data, *t, *n, rest)
            }
            [Step::Name("ephemeral"), Step::Name(t), Step::Name(n), rest @ ..] => {
                (Mode::Ephemeral, *t, *n, rest)
            }
            [Step::Name(t), Step::Name(n), rest @ ..] => (Mode::Managed, *t, *n, rest),
            _ => return None,
        };
        let key = match key {
            [] => None,
            [Step::Key(k)] => Some(k.clone()),
            _ => return None,
        };
        Some(Address {
            id: ResourceAddr {
                module,
                mode,
                type_name: type_name.to_string(),
                name: name.to_string(),
            },
            key,
        })
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.id)?;
        match &self.key {
            Some(k) => write!(f, "{k}"),
            None => Ok(()),
        }
    }
}

enum Step<'a> {
    Name(&'a str),
    Key(InstanceKey),
}

/// The leading `module.NAME[KEY]` steps as a path, and how many steps
/// they took.
fn module_steps(steps: &[Step<'_>]) -> (ModulePath, usize) {
    let mut i = 0;
    let mut path = Vec::new();
    while let (Some(Step::Name("module")), Some(Step::Name(call))) =
        (steps.get(i), steps.get(i + 1))
    {
        i += 2;
        let key = match steps.get(i) {
            Some(Step::Key(k)) => {
                i += 1;
                Some(k.clone())
            }
            _ => None,
        };
        path.push(ModuleStep {
            call: call.to_string(),
            key,
        });
    }
    (ModulePath(path), i)
}

/// `a.b["k.x"][0]` as names and keys; a quoted key may hold any character.
fn split_steps(s: &str) -> Option<Vec<Step<'_>>> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let (key, len) = if after.starts_with('"') {
                let mut de = serde_json::Deserializer::from_str(after).into_iter::<String>();
                let k = de.next()?.ok()?;
                (InstanceKey::Str(k), de.byte_offset())
            } else {
                let end = after.find(']')?;
                (InstanceKey::Int(after[..end].parse().ok()?), end)
            };
            rest = after[len..].strip_prefix(']')?;
            out.push(Step::Key(key));
        } else {
            let rest2 = rest.strip_prefix('.').unwrap_or(rest);
            if rest2.len() != rest.len() && out.is_empty() {
                return None;
            }
            let end = rest2.find(['.', '[']).unwrap_or(rest2.len());
            if end == 0 {
                return None;
            }
            out.push(Step::Name(&rest2[..end]));
            rest = &rest2[end..];
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_instance_splits_from_its_configuration() {
        let aws = r#"provider["registry.terraform.io/hashicorp/aws"]"#;
        let keyed = format!(r#"{aws}.by_region["us-east-1"]"#);
        assert_eq!(
            split_provider_instance(&keyed),
            (
                format!("{aws}.by_region").as_str(),
                Some("us-east-1".to_string())
            )
        );
        assert_eq!(
            split_provider_instance(&format!("{aws}.east")),
            (format!("{aws}.east").as_str(), None)
        );
        assert_eq!(split_provider_instance(aws), (aws, None));
        let quoted = format!(r#"module.m.{aws}.p["a\"b"]"#);
        assert_eq!(split_provider_instance(&quoted).1.as_deref(), Some("a\"b"));
        assert_eq!(
            provider_parts(&keyed),
            (format!("{aws}.by_region"), Some(keyed.clone()))
        );
    }

    #[test]
    fn addresses_round_trip() {
        for a in [
            "t.n",
            "t.n[3]",
            "data.t.n",
            r#"t.n["a.b]c"]"#,
            r#"module.a[0].module.b["x.y"].data.t.n["k"]"#,
            "module.a.t.n",
        ] {
            let parsed = Address::parse(a).unwrap_or_else(|| panic!("{a} did not parse"));
            assert_eq!(parsed.to_string(), a);
        }
        let a = Address::parse(r#"module.a["x"].module.b[2].t.n"#).expect("parses");
        assert_eq!(a.id.module.to_string(), r#"module.a["x"].module.b[2]"#);
        assert_eq!(a.id.config().to_string(), "module.a.module.b.t.n");
        assert_eq!(
            a.id.module.steps()[0],
            ModuleStep {
                call: "a".into(),
                key: Some(InstanceKey::Str("x".into()))
            }
        );
    }

    #[test]
    fn module_paths_round_trip_and_refuse_what_is_not_one() {
        for p in ["", "module.a", r#"module.a["k"].module.b[1]"#] {
            let parsed = ModulePath::parse(p).unwrap_or_else(|| panic!("{p} did not parse"));
            assert_eq!(parsed.to_string(), p);
        }
        for p in ["module", "module.a.t", "t.n", "module.a[0][1]"] {
            assert!(ModulePath::parse(p).is_none(), "{p} parsed");
        }
        let inner = ModulePath::parse("module.a[0].module.b").expect("parses");
        let moved = inner
            .replace_prefix(
                &ModulePath::parse("module.a[0]").expect("parses"),
                &ModulePath::parse("module.c").expect("parses"),
            )
            .expect("is under it");
        assert_eq!(moved.to_string(), "module.c.module.b");
    }

    #[test]
    fn malformed_addresses_are_refused() {
        for a in [
            "", "t", "t.n.x", ".t.n", "t..n", "t.n[", "t.n[x]", "t.n[0]x", "module.a",
        ] {
            assert!(Address::parse(a).is_none(), "{a} parsed");
        }
        assert!(ResourceAddr::parse("t.n[0]").is_none());
    }

    #[test]
    fn a_provider_configuration_names_its_provider() {
        let aws = "registry.terraform.io/hashicorp/aws";
        assert_eq!(provider_of_config(&format!("provider[\"{aws}\"]")), aws);
        assert_eq!(
            provider_of_config(&format!("module.m.provider[\"{aws}\"].east")),
            aws
        );
        assert_eq!(provider_of_config(aws), aws);
    }
}

/// A provider's source address in full, as state records it:
/// `hashicorp/aws` is `registry.terraform.io/hashicorp/aws`, and case does
/// not matter.
pub fn provider_source(source: &str) -> String {
    let source = source.to_ascii_lowercase();
    match source.matches('/').count() {
        1 => format!("registry.terraform.io/{source}"),
        _ => source,
    }
}

/// The provider's address in a provider configuration's address as state
/// records it, without the module or alias around it:
/// `module.m.provider["registry.terraform.io/hashicorp/aws"].east` is
/// `registry.terraform.io/hashicorp/aws` (text not of that form is
/// returned whole).
/// A provider configuration address split from its instance key:
/// `provider["…/aws"].by_region["us-east-1"]` is the configuration
/// `provider["…/aws"].by_region` and the key `us-east-1`.
pub fn split_provider_instance(address: &str) -> (&str, Option<String>) {
    // The key follows the source's closing `"]` and the alias.
    let Some(source_end) = address.find("\"]").map(|i| i + 2) else {
        return (address, None);
    };
    let Some(open) = address[source_end..].find('[').map(|i| i + source_end) else {
        return (address, None);
    };
    match serde_json::from_str::<String>(address[open + 1..].trim_end_matches(']')) {
        Ok(key) if address.ends_with(']') => (&address[..open], Some(key)),
        _ => (address, None),
    }
}

/// Where an object of provider configuration (instance) `address` records
/// it: the configuration on its resource, and the whole address on the
/// object when it names an instance.
pub fn provider_parts(address: &str) -> (String, Option<String>) {
    match split_provider_instance(address) {
        (config, Some(_)) => (config.to_string(), Some(address.to_string())),
        (config, None) => (config.to_string(), None),
    }
}

pub fn provider_of_config(config: &str) -> &str {
    config
        .split_once("provider[\"")
        .and_then(|(_, rest)| rest.split_once("\"]"))
        .map_or(config, |(address, _)| address)
}
