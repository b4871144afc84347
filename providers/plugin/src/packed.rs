//! A provider's schemas packed so that a type costs nothing until it is
//! used: the provider's answers less their descriptions, with each type's
//! schema encoded on its own. A configuration names a few dozen of the AWS
//! provider's two thousand types; decoding and converting all of them was
//! most of a run's memory (313 MB of heap for a `validate`).
//!
//! The packed bytes are also the file kept on disk ([`crate::SchemaCache`]),
//! so the schema of a provider process just asked and the schema read back
//! on a later run are one form, read by one path:
//!
//! ```text
//! "strata-schemas 2\n"
//! GetProviderSchema.Response, its type maps empty   (length-delimited)
//! GetResourceIdentitySchemas.Response               (length-delimited)
//! per type: mode, name, schema                      (varint, then length-delimited bytes)
//! ```
//!
//! A saved plan's pack carries the schemas of the types its run used and
//! only the names of the others (their mode's number plus the number of
//! modes, then the name): a type the plan did not use is still known to
//! be the provider's, and one it does not name is known not to be,
//! without asking the provider.

use crate::proto::tfplugin6 as v6;
use prost::encoding::{decode_varint, encode_varint};
use prost::Message;
use std::collections::HashMap;
use std::ops::Range;
use strata_provider::TypeMode;

const MAGIC: &[u8] = b"strata-schemas 2\n";

/// The packed schemas: what every run needs decoded, and where each
/// type's schema lies in `bytes`.
pub(crate) struct Packed {
    /// The provider's own block, functions, capabilities and diagnostics.
    pub(crate) head: v6::get_provider_schema::Response,
    pub(crate) identity: v6::get_resource_identity_schemas::Response,
    pub(crate) types: Vec<PackedType>,
    bytes: Vec<u8>,
}

/// One type's place in the packed bytes; `None` when the pack names it
/// without its schema.
pub(crate) struct PackedType {
    pub(crate) mode: TypeMode,
    pub(crate) name: String,
    pub(crate) at: Option<Range<usize>>,
}

/// The modes of types, in the order they are packed and indexed.
pub(crate) const MODES: [TypeMode; 5] = [
    TypeMode::Managed,
    TypeMode::Data,
    TypeMode::Ephemeral,
    TypeMode::List,
    TypeMode::Action,
];

/// `mode`'s place in [`MODES`].
pub(crate) fn slot(mode: TypeMode) -> usize {
    match mode {
        TypeMode::Managed => 0,
        TypeMode::Data => 1,
        TypeMode::Ephemeral => 2,
        TypeMode::List => 3,
        TypeMode::Action => 4,
    }
}

/// What a new provider process is asked before any other call.
#[derive(Default)]
pub(crate) struct Asked {
    pub(crate) schema: v6::get_provider_schema::Response,
    pub(crate) identity: v6::get_resource_identity_schemas::Response,
}

impl Asked {
    /// The schemas less their documentation, as they are kept.
    pub(crate) fn without_descriptions(&mut self) {
        let r = &mut self.schema;
        let all = r
            .resource_schemas
            .values_mut()
            .chain(r.data_source_schemas.values_mut())
            .chain(r.ephemeral_resource_schemas.values_mut())
            .chain(r.list_resource_schemas.values_mut())
            .chain(r.provider.as_mut())
            .chain(r.provider_meta.as_mut())
            .chain(
                r.action_schemas
                    .values_mut()
                    .filter_map(|a| a.schema.as_mut()),
            );
        for s in all {
            if let Some(block) = s.block.as_mut() {
                without_descriptions(block);
            }
        }
    }
}

/// `block` less its documentation: what is kept is for planning, and the
/// descriptions are most of a large provider's schema (`providers schema`
/// asks the provider again for them).
fn without_descriptions(block: &mut v6::schema::Block) {
    block.description = String::new();
    for a in &mut block.attributes {
        without_attribute_description(a);
    }
    for b in &mut block.block_types {
        if let Some(inner) = b.block.as_mut() {
            without_descriptions(inner);
        }
    }
}

fn without_attribute_description(a: &mut v6::schema::Attribute) {
    a.description = String::new();
    if let Some(nested) = a.nested_type.as_mut() {
        for inner in &mut nested.attributes {
            without_attribute_description(inner);
        }
    }
}

/// `asked` packed: descriptions left out (they are for documentation,
/// which `providers schema -json` asks the provider for again), every
/// type's schema encoded apart, in a stable order.
pub(crate) fn pack(mut asked: Asked) -> Vec<u8> {
    asked.without_descriptions();
    let r = &mut asked.schema;
    let actions = std::mem::take(&mut r.action_schemas)
        .into_iter()
        .map(|(k, a)| (k, a.schema.unwrap_or_default()))
        .collect();
    let families: [HashMap<String, v6::Schema>; 5] = [
        std::mem::take(&mut r.resource_schemas),
        std::mem::take(&mut r.data_source_schemas),
        std::mem::take(&mut r.ephemeral_resource_schemas),
        std::mem::take(&mut r.list_resource_schemas),
        actions,
    ];
    let mut types = Vec::new();
    for (mode, family) in MODES.into_iter().zip(families) {
        let mut family: Vec<_> = family.into_iter().collect();
        family.sort_by(|a, b| a.0.cmp(&b.0));
        types.extend(
            family
                .into_iter()
                .map(|(name, schema)| (mode, name, schema.encode_to_vec())),
        );
    }
    let types = types
        .iter()
        .map(|(mode, name, schema)| (*mode, name.as_str(), Some(schema.as_slice())));
    packed_of(&asked.schema, &asked.identity, types)
}

/// The packed form of a provider's own schemas (`head`, its type maps
/// empty) and `identity`, and of `types`, each schema already encoded
/// (`None`: the type named only).
fn packed_of<'t>(
    head: &v6::get_provider_schema::Response,
    identity: &v6::get_resource_identity_schemas::Response,
    types: impl Iterator<Item = (TypeMode, &'t str, Option<&'t [u8]>)>,
) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend(head.encode_length_delimited_to_vec());
    bytes.extend(identity.encode_length_delimited_to_vec());
    for (mode, name, schema) in types {
        let named_only = match schema {
            Some(_) => 0,
            None => MODES.len(),
        };
        encode_varint((slot(mode) + named_only) as u64, &mut bytes);
        encode_varint(name.len() as u64, &mut bytes);
        bytes.extend(name.as_bytes());
        if let Some(schema) = schema {
            encode_varint(schema.len() as u64, &mut bytes);
            bytes.extend(schema);
        }
    }
    bytes
}

impl Packed {
    /// The packed schemas in `bytes`; `None` when they are not whole (a
    /// file of another form or cut short), which costs only a new answer.
    pub(crate) fn read(bytes: Vec<u8>) -> Option<Packed> {
        let mut rest = bytes.strip_prefix(MAGIC)?;
        let head = Message::decode_length_delimited(&mut rest).ok()?;
        let identity = Message::decode_length_delimited(&mut rest).ok()?;
        let mut types = Vec::new();
        while !rest.is_empty() {
            let number = usize::try_from(decode_varint(&mut rest).ok()?).ok()?;
            let named_only = number >= MODES.len();
            let mode = *MODES
                .get(number % MODES.len())
                .filter(|_| number < 2 * MODES.len())?;
            let name = take(&mut rest)?;
            let name = std::str::from_utf8(name).ok()?.to_string();
            let at = match named_only {
                true => None,
                false => {
                    let len = take(&mut rest)?.len();
                    let end = bytes.len() - rest.len();
                    Some(end - len..end)
                }
            };
            types.push(PackedType { mode, name, at });
        }
        Some(Packed {
            head,
            identity,
            types,
            bytes,
        })
    }

    /// The schema of one type, decoded now.
    pub(crate) fn schema(&self, at: &Range<usize>) -> Result<v6::Schema, prost::DecodeError> {
        v6::Schema::decode(&self.bytes[at.clone()])
    }

    /// The bytes, as kept on disk.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// A smaller pack of the same provider: its own schemas, and of each
    /// of `types` (mode, name, place) the schema when it has a place, else
    /// only its name — what a saved plan carries.
    pub(crate) fn only<'t>(
        &self,
        types: impl Iterator<Item = (TypeMode, &'t str, Option<&'t Range<usize>>)>,
    ) -> Vec<u8> {
        let types =
            types.map(|(mode, name, at)| (mode, name, at.map(|at| &self.bytes[at.clone()])));
        packed_of(&self.head, &self.identity, types)
    }
}

/// A length-prefixed run of bytes from the front of `rest`.
fn take<'b>(rest: &mut &'b [u8]) -> Option<&'b [u8]> {
    let len = usize::try_from(decode_varint(rest).ok()?).ok()?;
    if len > rest.len() {
        return None;
    }
    let (taken, left) = rest.split_at(len);
    *rest = left;
    Some(taken)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A schema of one optional attribute of the type `ty` (JSON).
    pub(crate) fn typed(attribute: &str, ty: &[u8]) -> v6::Schema {
        v6::Schema {
            version: 2,
            block: Some(v6::schema::Block {
                description: "documentation".into(),
                attributes: vec![v6::schema::Attribute {
                    name: attribute.into(),
                    r#type: ty.to_vec(),
                    optional: true,
                    ..Default::default()
                }],
                ..Default::default()
            }),
        }
    }

    fn schema(attribute: &str) -> v6::Schema {
        typed(attribute, b"\"string\"")
    }

    /// Every type comes back under its mode, its schema whole and less
    /// its description; a file cut short or of the older form is not read.
    #[test]
    fn packed_types_read_back_one_by_one() {
        let mut asked = Asked::default();
        asked.schema.provider = Some(schema("region"));
        let r = &mut asked.schema;
        r.resource_schemas.insert("x_b".into(), schema("b"));
        r.resource_schemas.insert("x_a".into(), schema("a"));
        r.data_source_schemas.insert("x_a".into(), schema("d"));
        r.action_schemas.insert(
            "x_go".into(),
            v6::ActionSchema {
                schema: Some(schema("g")),
            },
        );
        let bytes = pack(asked);
        let packed = Packed::read(bytes.clone()).expect("whole");
        let found: Vec<_> = packed
            .types
            .iter()
            .map(|t| {
                let s = packed
                    .schema(t.at.as_ref().expect("carried"))
                    .expect("decodes");
                let block = s.block.expect("block");
                assert_eq!(block.description, "");
                (t.mode, t.name.as_str(), block.attributes[0].name.clone())
            })
            .collect();
        assert_eq!(
            found,
            [
                (TypeMode::Managed, "x_a", "a".to_string()),
                (TypeMode::Managed, "x_b", "b".to_string()),
                (TypeMode::Data, "x_a", "d".to_string()),
                (TypeMode::Action, "x_go", "g".to_string()),
            ]
        );
        let provider = packed.head.provider.expect("provider");
        assert!(packed.head.resource_schemas.is_empty());
        assert_eq!(provider.block.expect("block").description, "");
        assert!(Packed::read(bytes[..bytes.len() - 3].to_vec()).is_none());
        assert!(Packed::read(bytes[MAGIC.len()..].to_vec()).is_none());
    }

    /// Every description goes, nested attributes' and blocks' too; what
    /// planning reads stays.
    #[test]
    fn descriptions_are_left_out_of_what_is_kept() {
        let attribute = |name: &str| v6::schema::Attribute {
            name: name.into(),
            r#type: b"\"string\"".to_vec(),
            description: "words".into(),
            optional: true,
            ..Default::default()
        };
        let nested = v6::schema::Attribute {
            nested_type: Some(v6::schema::Object {
                attributes: vec![attribute("inner")],
                ..Default::default()
            }),
            ..attribute("outer")
        };
        let mut block = v6::schema::Block {
            description: "a block".into(),
            attributes: vec![attribute("a"), nested],
            block_types: vec![v6::schema::NestedBlock {
                type_name: "b".into(),
                block: Some(v6::schema::Block {
                    description: "inner block".into(),
                    attributes: vec![attribute("c")],
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        without_descriptions(&mut block);
        let text = format!("{block:?}");
        assert!(
            !text.contains("words") && !text.contains("block\""),
            "{text}"
        );
        assert!(
            text.contains("inner") && text.contains("optional: true"),
            "{text}"
        );
    }
}
