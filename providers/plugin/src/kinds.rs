//! A provider's schemas as the driver keeps them: what
//! `GetProviderSchema` and `GetResourceIdentitySchemas` said, each type
//! converted when first used, once per provider binary (a second process
//! of it shares them).

use crate::convert::resource_schema;
use crate::identity;
use crate::packed::{slot, Packed, MODES};
use crate::proto::tfplugin6 as v6;
use crate::schema::{block_type, SchemaError};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::OnceLock;
use strata_provider::{FunctionParam, FunctionSig, IdentitySchema, ResourceSchema, TypeMode};
use strata_value::types::Type;

/// One kind of object the provider has: its protocol schema (for the
/// proposed new object), strata's form of it and its value type.
pub(crate) struct Kind {
    pub(crate) block: v6::schema::Block,
    pub(crate) schema: ResourceSchema,
    pub(crate) ty: Type,
    /// A managed type's identity schema, when it declares one.
    pub(crate) identity: Option<IdentitySchema>,
}

impl Kind {
    pub(crate) fn of(s: &v6::Schema, path: &str) -> Result<Kind, SchemaError> {
        let block = s.block.clone().unwrap_or_default();
        Ok(Kind {
            schema: resource_schema(s.version, &block, path)?,
            ty: block_type(&block, path)?,
            block,
            identity: None,
        })
    }
}

/// Everything `GetProviderSchema` said: the provider's own block and its
/// functions converted at once, each type when it is first asked for.
pub(crate) struct Schemas {
    pub(crate) provider: Kind,
    pub(crate) functions: BTreeMap<String, FunctionSig>,
    /// Managed types' identity schemas (a few of the provider's types
    /// declare one), by type; one strata cannot read makes its type
    /// unusable.
    identities: HashMap<String, Result<IdentitySchema, SchemaError>>,
    /// The types of each mode, by name, in [`crate::packed::MODES`]'s order.
    types: [HashMap<String, Lazy>; 5],
    packed: Packed,
}

/// One type: where its schema is packed (`None`: a saved plan's pack
/// names it without its schema), and its conversion once made.
struct Lazy {
    at: Option<Range<usize>>,
    kind: OnceLock<Result<Kind, SchemaError>>,
}

impl Schemas {
    /// The schemas packed in `packed`: the provider's block and functions
    /// converted now, its types indexed.
    pub(crate) fn of(mut packed: Packed) -> Result<Schemas, SchemaError> {
        let mut types: [HashMap<String, Lazy>; 5] = Default::default();
        for t in std::mem::take(&mut packed.types) {
            let lazy = Lazy {
                at: t.at,
                kind: OnceLock::new(),
            };
            types[slot(t.mode)].insert(t.name, lazy);
        }
        let head = &packed.head;
        Ok(Schemas {
            provider: Kind::of(&head.provider.clone().unwrap_or_default(), "provider")?,
            // A function whose types cannot be read is left out (a call to
            // it is then an unknown function), not the provider.
            functions: head
                .functions
                .iter()
                .filter_map(|(name, f)| Some((name.clone(), function_sig(f, name).ok()?)))
                .collect(),
            identities: identity::schemas(&packed.identity),
            types,
            packed,
        })
    }

    /// The type `name` of `mode`, converted on the first ask; `None` when
    /// the provider has no such type or its schema is not here (see
    /// [`Schemas::declares`]), an error when strata cannot read its schema
    /// (left out, so that one such type does not cost the provider's
    /// others).
    pub(crate) fn kind(&self, mode: TypeMode, name: &str) -> Option<Result<&Kind, &SchemaError>> {
        let lazy = self.types[slot(mode)].get(name)?;
        let at = lazy.at.as_ref()?;
        let kind = lazy.kind.get_or_init(|| self.convert(mode, name, at));
        Some(kind.as_ref())
    }

    /// Whether the provider has the type `name` of `mode`, its schema here
    /// or not.
    pub(crate) fn declares(&self, mode: TypeMode, name: &str) -> bool {
        self.types[slot(mode)].contains_key(name)
    }

    fn convert(&self, mode: TypeMode, name: &str, at: &Range<usize>) -> Result<Kind, SchemaError> {
        let schema = self.packed.schema(at).map_err(|e| SchemaError {
            path: name.to_string(),
            why: format!("the kept schema does not decode: {e}"),
        })?;
        let mut kind = Kind::of(&schema, name)?;
        if mode == TypeMode::Managed {
            kind.identity = self.identities.get(name).cloned().transpose()?;
        }
        Ok(kind)
    }

    /// The names of the types of `mode`, in order.
    pub(crate) fn names(&self, mode: TypeMode) -> Vec<String> {
        let mut names: Vec<String> = self.types[slot(mode)].keys().cloned().collect();
        names.sort();
        names
    }

    /// The schemas packed again with only the types asked for so far
    /// (what a run used, for a saved plan to carry), the others named.
    pub(crate) fn used(&self) -> Vec<u8> {
        let mut all: Vec<_> = MODES
            .into_iter()
            .flat_map(|mode| {
                self.types[slot(mode)].iter().map(move |(name, lazy)| {
                    let used = lazy.at.as_ref().filter(|_| lazy.kind.get().is_some());
                    (mode, name.as_str(), used)
                })
            })
            .collect();
        all.sort_by(|a, b| (slot(a.0), a.1).cmp(&(slot(b.0), b.1)));
        self.packed.only(all.into_iter())
    }

    /// The identity schemas strata can read, by managed type.
    pub(crate) fn identities(&self) -> impl Iterator<Item = (&str, &IdentitySchema)> {
        self.identities
            .iter()
            .filter(|(name, _)| self.types[slot(TypeMode::Managed)].contains_key(*name))
            .filter_map(|(name, s)| Some((name.as_str(), s.as_ref().ok()?)))
    }
}

fn function_sig(f: &v6::Function, name: &str) -> Result<FunctionSig, SchemaError> {
    let ty = |bytes: &[u8], what: &str| -> Result<Type, SchemaError> {
        let bad = |why: String| SchemaError {
            path: format!("function {name} ({what})"),
            why,
        };
        let json: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
        strata_value::json::type_from_json(&json).map_err(bad)
    };
    let param = |p: &v6::function::Parameter| -> Result<FunctionParam, SchemaError> {
        Ok(FunctionParam {
            name: p.name.clone(),
            ty: ty(&p.r#type, &p.name)?,
            allow_null: p.allow_null_value,
            allow_unknown: p.allow_unknown_values,
        })
    };
    Ok(FunctionSig {
        params: f.parameters.iter().map(param).collect::<Result<_, _>>()?,
        variadic: f.variadic_parameter.as_ref().map(param).transpose()?,
        returns: ty(
            &f.r#return
                .as_ref()
                .map(|r| r.r#type.clone())
                .unwrap_or_default(),
            "return",
        )?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed::tests::typed;
    use crate::packed::Asked;

    /// A type is converted when it is first asked for and not before: a
    /// provider of thousands of types costs what a configuration uses, and
    /// a type strata cannot read costs only an ask for it.
    #[test]
    fn types_are_converted_when_first_asked_for() {
        let mut asked = Asked::default();
        let r = &mut asked.schema;
        r.resource_schemas
            .insert("x_used".into(), typed("name", b"\"string\""));
        r.resource_schemas
            .insert("x_other".into(), typed("name", b"\"string\""));
        r.resource_schemas
            .insert("x_broken".into(), typed("name", b"[\"nonsense\"]"));
        let packed = Packed::read(crate::packed::pack(asked)).expect("packed");
        let schemas = Schemas::of(packed).expect("the provider's block reads");
        let converted = |name: &str| {
            schemas.types[slot(TypeMode::Managed)][name]
                .kind
                .get()
                .is_some()
        };
        assert!(!converted("x_used") && !converted("x_broken"));
        let used = schemas.kind(TypeMode::Managed, "x_used").expect("declared");
        assert!(used
            .expect("readable")
            .schema
            .attributes
            .contains_key("name"));
        assert!(converted("x_used") && !converted("x_other"));
        let broken = schemas
            .kind(TypeMode::Managed, "x_broken")
            .expect("declared");
        assert!(broken.is_err());
        assert!(schemas.kind(TypeMode::Data, "x_used").is_none());
        assert_eq!(
            schemas.names(TypeMode::Managed),
            ["x_broken", "x_other", "x_used"]
        );
    }

    /// A saved plan's pack carries the schemas of the types its run used
    /// and names the others: read back, a named type is the provider's
    /// though its schema is not there, and a type it does not name is not.
    #[test]
    fn a_used_pack_names_the_types_it_does_not_carry() {
        let mut asked = Asked::default();
        let r = &mut asked.schema;
        for name in ["x_used", "x_other"] {
            r.resource_schemas
                .insert(name.into(), typed("name", b"\"string\""));
        }
        r.data_source_schemas
            .insert("x_lookup".into(), typed("id", b"\"string\""));
        let packed = Packed::read(crate::packed::pack(asked)).expect("packed");
        let whole = Schemas::of(packed).expect("reads");
        assert!(whole.kind(TypeMode::Managed, "x_used").is_some());
        let used = Packed::read(whole.used()).expect("the used pack reads");
        let carried: Vec<_> = used.types.iter().filter(|t| t.at.is_some()).collect();
        assert_eq!(carried.len(), 1, "only the used type's schema");
        let saved = Schemas::of(used).expect("reads");
        let managed = TypeMode::Managed;
        assert!(saved.kind(managed, "x_used").is_some_and(|k| k.is_ok()));
        assert!(saved.kind(managed, "x_other").is_none());
        assert!(saved.declares(managed, "x_other"));
        assert!(saved.declares(TypeMode::Data, "x_lookup"));
        assert!(!saved.declares(managed, "y_foreign"));
        assert_eq!(saved.names(managed), ["x_other", "x_used"]);
        assert_eq!(saved.names(TypeMode::Data), ["x_lookup"]);
    }
}
