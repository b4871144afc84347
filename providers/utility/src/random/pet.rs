//! `random_pet`: names like `wondrous-teal-otter`, an adverb for each
//! word past two, an adjective, an animal.

use super::{generator, keepers};
use crate::common::{computed_string, count, string, with};
use crate::provider::Resource;
use async_trait::async_trait;
use rand::seq::SliceRandom;
use strata_provider::{AttributeSchema, DriverError, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

// Short, plain words, so generated names suit resource names anywhere.
const ADVERBS: &[&str] = &[
    "ably", "amply", "aptly", "boldly", "briskly", "calmly", "cleanly", "clearly", "deeply",
    "deftly", "duly", "early", "evenly", "fairly", "finely", "firmly", "freely", "fully", "gladly",
    "gently", "highly", "justly", "keenly", "kindly", "largely", "lightly", "lively", "loudly",
    "mainly", "merely", "mildly", "neatly", "nicely", "openly", "partly", "plainly", "quickly",
    "quietly", "rarely", "readily", "really", "richly", "simply", "slowly", "smoothly", "solely",
    "steadily", "surely", "swiftly", "truly", "vastly", "warmly", "wholly", "widely", "wisely",
];
const ADJECTIVES: &[&str] = &[
    "able", "amber", "brave", "bright", "calm", "clever", "cosmic", "crisp", "curious", "daring",
    "eager", "epic", "fair", "fancy", "fast", "fine", "fleet", "fond", "fresh", "gentle", "glad",
    "golden", "grand", "happy", "hardy", "honest", "humble", "jolly", "keen", "kind", "lucid",
    "lucky", "merry", "mighty", "modest", "noble", "patient", "polite", "proud", "quick", "quiet",
    "rapid", "ready", "robust", "rosy", "sharp", "shiny", "smart", "snowy", "solid", "steady",
    "sunny", "swift", "teal", "tidy", "vivid", "warm", "wise", "witty", "zesty",
];
const ANIMALS: &[&str] = &[
    "alpaca", "badger", "beaver", "bison", "bobcat", "camel", "cheetah", "condor", "cougar",
    "coyote", "crane", "dingo", "dolphin", "eagle", "egret", "falcon", "ferret", "finch",
    "gazelle", "gecko", "gibbon", "heron", "hornet", "ibex", "iguana", "jackal", "jaguar", "koala",
    "lemur", "leopard", "llama", "lynx", "marmot", "marten", "mink", "moose", "newt", "ocelot",
    "osprey", "otter", "owl", "panda", "pelican", "penguin", "puffin", "quail", "rabbit", "raven",
    "salmon", "seal", "shrew", "sloth", "stork", "swan", "tapir", "tiger", "toucan", "walrus",
    "weasel", "wombat", "yak", "zebra",
];

pub(crate) struct RandomPet;

#[async_trait]
impl Resource for RandomPet {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            keepers(),
            (
                "length",
                AttributeSchema::optional(Type::Number, "Words in the name (default 2).")
                    .and_computed()
                    .force_new(),
            ),
            (
                "prefix",
                AttributeSchema::optional(Type::String, "Put first, before a separator.")
                    .force_new(),
            ),
            (
                "separator",
                AttributeSchema::optional(Type::String, "Between the words (default \"-\").")
                    .and_computed()
                    .force_new(),
            ),
            ("id", computed_string("The generated name.")),
        ])
    }

    fn defaults(&self) -> Vec<(&'static str, Value)> {
        vec![("length", Value::int(2)), ("separator", Value::string("-"))]
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let length = count("random_pet", planned, "length", 2)?;
        let separator = string(planned, "separator").unwrap_or_else(|| "-".to_string());
        let mut rng = generator("random_pet", None)?;
        let mut words: Vec<String> = Vec::with_capacity(length + 1);
        if let Some(prefix) = string(planned, "prefix").filter(|p| !p.is_empty()) {
            words.push(prefix);
        }
        let mut pick = |list: &[&str]| list.choose(&mut rng).map_or("pet", |w| w).to_string();
        for _ in 2..length {
            words.push(pick(ADVERBS));
        }
        if length >= 2 {
            words.push(pick(ADJECTIVES));
        }
        if length >= 1 {
            words.push(pick(ANIMALS));
        }
        Ok(with(
            planned,
            vec![("id", Value::string(words.join(&separator)))],
        ))
    }
}
