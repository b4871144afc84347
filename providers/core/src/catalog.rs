//! GPU catalogs: which instance type gives a GPU model × count on a cloud,
//! in which regions, at what list price on demand and as spot. Each cloud
//! driver ships its own (`providers/<cloud>/catalog.csv`), with the source
//! and the date its figures were taken in the file's header comments.
//!
//! The file is CSV in the shape of SkyPilot's public catalogs:
//! `InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice`,
//! one row per instance type and region, `#` lines for provenance
//! (`# source: …`, `# taken: YYYY-MM-DD`).

use std::collections::BTreeSet;
use std::fmt;

/// One instance type in one region.
#[derive(Debug, Clone, PartialEq)]
pub struct Offer {
    pub instance_type: String,
    /// The GPU model as catalogs name it: `H100`, `A100`, `A100-80GB`, `L4`.
    pub gpu: String,
    pub gpus: u32,
    pub region: String,
    /// USD per hour on demand; `None` when the list has no price.
    pub price: Option<f64>,
    /// USD per hour as spot; `None` when none is listed.
    pub spot_price: Option<f64>,
}

/// A cloud's GPU offers and where its figures come from.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// The cloud's name in messages: `AWS`.
    pub cloud: String,
    pub source: String,
    /// When the figures were taken (`YYYY-MM-DD`).
    pub taken: String,
    offers: Vec<Offer>,
}

/// Why no offer fits.
#[derive(Debug, Clone, PartialEq)]
pub enum NotOffered {
    /// The cloud has no instance type with this GPU model and count.
    Shape {
        cloud: String,
        gpu: String,
        gpus: u32,
        /// The shapes it does have, `H100×8`.
        shapes: Vec<String>,
    },
    /// It has, but not in this region.
    Region {
        cloud: String,
        gpu: String,
        gpus: u32,
        region: String,
        /// The regions that have it.
        regions: Vec<String>,
    },
}

impl fmt::Display for NotOffered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotOffered::Shape {
                cloud,
                gpu,
                gpus,
                shapes,
            } => write!(
                f,
                "{cloud} has no instance type with {gpus} × {gpu}; its GPU shapes are {}",
                shapes.join(", ")
            ),
            NotOffered::Region {
                cloud,
                gpu,
                gpus,
                region,
                regions,
            } => write!(
                f,
                "{cloud} offers {gpus} × {gpu} in {}, not in {region}",
                regions.join(", ")
            ),
        }
    }
}

impl Catalog {
    /// Reads a catalog file; the error names the line at fault.
    pub fn parse(cloud: &str, text: &str) -> Result<Catalog, String> {
        let header = |key: &str| {
            text.lines()
                .filter_map(|l| l.strip_prefix('#'))
                .find_map(|l| l.trim().strip_prefix(key).map(|v| v.trim().to_string()))
        };
        let source = header("source:").ok_or("the catalog names no `# source:`")?;
        let taken = header("taken:").ok_or("the catalog gives no `# taken:` date")?;
        let mut reader = csv::ReaderBuilder::new()
            .comment(Some(b'#'))
            .from_reader(text.as_bytes());
        let want = [
            "InstanceType",
            "AcceleratorName",
            "AcceleratorCount",
            "Region",
            "Price",
            "SpotPrice",
        ];
        let headers = reader.headers().map_err(|e| e.to_string())?.clone();
        if headers.iter().collect::<Vec<_>>() != want {
            return Err(format!("the columns must be {}", want.join(",")));
        }
        let mut offers = Vec::new();
        for row in reader.records() {
            let row = row.map_err(|e| e.to_string())?;
            let line = row.position().map_or(0, |p| p.line());
            let bad = |what: &str| format!("line {line}: {what}");
            let price = |i: usize| -> Result<Option<f64>, String> {
                match row.get(i).unwrap_or("").trim() {
                    "" => Ok(None),
                    s => s
                        .parse::<f64>()
                        .map(Some)
                        .map_err(|_| bad(&format!("{s:?} is not a price"))),
                }
            };
            offers.push(Offer {
                instance_type: row.get(0).unwrap_or("").to_string(),
                gpu: row.get(1).unwrap_or("").to_string(),
                gpus: row
                    .get(2)
                    .unwrap_or("")
                    .parse()
                    .map_err(|_| bad("AcceleratorCount is not a whole number"))?,
                region: row.get(3).unwrap_or("").to_string(),
                price: price(4)?,
                spot_price: price(5)?,
            });
        }
        Ok(Catalog {
            cloud: cloud.to_string(),
            source,
            taken,
            offers,
        })
    }

    /// A driver's embedded catalog, parsed on first use and kept. `None`
    /// only if the file shipped broken, which each driver's tests rule out.
    pub fn embedded(
        cell: &'static std::sync::OnceLock<Option<Catalog>>,
        cloud: &str,
        text: &str,
    ) -> Option<&'static Catalog> {
        cell.get_or_init(|| Catalog::parse(cloud, text).ok())
            .as_ref()
    }

    pub fn offers(&self) -> &[Offer] {
        &self.offers
    }

    /// The GPU shapes offered, `(model, count)`.
    pub fn shapes(&self) -> BTreeSet<(String, u32)> {
        self.offers
            .iter()
            .map(|o| (o.gpu.clone(), o.gpus))
            .collect()
    }

    /// The offer for `gpus` × `gpu` in `region` (the cheapest on demand
    /// when several instance types give it), or why there is none. GPU
    /// names compare without regard to case.
    pub fn pick(&self, gpu: &str, gpus: u32, region: &str) -> Result<&Offer, NotOffered> {
        let shape: Vec<&Offer> = self
            .offers
            .iter()
            .filter(|o| o.gpu.eq_ignore_ascii_case(gpu) && o.gpus == gpus)
            .collect();
        if shape.is_empty() {
            return Err(NotOffered::Shape {
                cloud: self.cloud.clone(),
                gpu: gpu.to_string(),
                gpus,
                shapes: self
                    .shapes()
                    .into_iter()
                    .map(|(g, n)| format!("{g}×{n}"))
                    .collect(),
            });
        }
        let price = |o: &&Offer| o.price.unwrap_or(f64::INFINITY);
        shape
            .iter()
            .filter(|o| o.region == region)
            .min_by(|a, b| price(a).total_cmp(&price(b)))
            .copied()
            .ok_or_else(|| NotOffered::Region {
                cloud: self.cloud.clone(),
                gpu: gpu.to_string(),
                gpus,
                region: region.to_string(),
                regions: shape
                    .iter()
                    .map(|o| o.region.clone())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "# source: a test\n# taken: 2026-11-30\nInstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\nbig,H100,8,r1,10.5,3\nbigger,H100,8,r1,12,\nbig,H100,8,r2,11,\nsmall,L4,1,r1,1,0.5\n";

    #[test]
    fn picks_the_cheapest_offer_in_the_region() {
        let c = Catalog::parse("Test", SMALL).expect("parses");
        assert_eq!(c.taken, "2026-11-30");
        let o = c.pick("h100", 8, "r1").expect("offered");
        assert_eq!(
            (o.instance_type.as_str(), o.price, o.spot_price),
            ("big", Some(10.5), Some(3.0))
        );
        assert_eq!(c.pick("H100", 8, "r2").expect("offered").spot_price, None);
    }

    #[test]
    fn says_where_a_gpu_is_offered_instead() {
        let c = Catalog::parse("Test", SMALL).expect("parses");
        let e = c.pick("L4", 1, "r2").expect_err("not in r2");
        assert_eq!(e.to_string(), "Test offers 1 × L4 in r1, not in r2");
        let e = c.pick("B200", 8, "r1").expect_err("no such shape");
        assert_eq!(
            e.to_string(),
            "Test has no instance type with 8 × B200; its GPU shapes are H100×8, L4×1"
        );
    }

    #[test]
    fn bad_files_are_refused_with_the_line() {
        let e = Catalog::parse("Test", &SMALL.replace("10.5", "ten")).expect_err("bad price");
        assert!(e.contains("line 4") && e.contains("\"ten\""), "{e}");
        let e = Catalog::parse("Test", &SMALL.replace("# taken: 2026-11-30\n", ""))
            .expect_err("no date");
        assert!(e.contains("taken"), "{e}");
    }
}
