//! GPU catalogs: which instance type gives a GPU model × count on a cloud,
//! in which regions, at what list price on demand and as spot. Each cloud
//! driver ships its own (`providers/<cloud>/catalog.csv`), with the source
//! and the date its figures were taken in the file's header comments.
//! Beside the GPU shapes a catalog prices the CPU machines strata's
//! modules run (system pools, a MultiKueue manager), their accelerator
//! cells empty.
//!
//! The file is CSV in the shape of SkyPilot's public catalogs:
//! `InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice`,
//! one row per instance type and region, `#` lines for provenance
//! (`# source: …`, `# taken: YYYY-MM-DD`). A file may add a
//! `FlexStartPrice` column (GKE's flex-start VMs, which no public catalog
//! lists: a team's price list gives them).

use crate::billing::Capacity;
use crate::money::Usd;
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
    /// Per hour on demand; `None` when the list has no price.
    pub price: Option<Usd>,
    /// Per hour as spot; `None` when none is listed.
    pub spot_price: Option<Usd>,
    /// Per hour as flex-start; `None` when none is listed.
    pub flex_start_price: Option<Usd>,
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
        let offers = read_rows(text)?.into_iter().map(|(_, o)| o).collect();
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
            .filter(|o| o.gpus > 0)
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
        shape
            .iter()
            .filter(|o| o.region == region)
            .min_by_key(|o| o.price.unwrap_or(Usd::micros(i64::MAX)))
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

/// The columns of a catalog and of a price list, in order; the last may
/// be left out.
const COLUMNS: [&str; 7] = [
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "Region",
    "Price",
    "SpotPrice",
    "FlexStartPrice",
];

/// The rows of a file in the catalog format, each with its line; a
/// machine without GPUs has both accelerator cells empty.
fn read_rows(text: &str) -> Result<Vec<(u64, Offer)>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| e.to_string())?.clone();
    let names: Vec<&str> = headers.iter().map(str::trim).collect();
    if names != COLUMNS && names != COLUMNS[..6] {
        return Err(format!(
            "the columns must be {} (the last may be left out)",
            COLUMNS.join(",")
        ));
    }
    let mut rows = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| e.to_string())?;
        let line = row.position().map_or(0, |p| p.line());
        let bad = |what: &str| format!("line {line}: {what}");
        let cell = |i: usize| row.get(i).unwrap_or("").trim();
        let price = |i: usize| -> Result<Option<Usd>, String> {
            match cell(i) {
                "" => Ok(None),
                s => match Usd::parse(s) {
                    // A negative price would make costs negative and pass
                    // any cap.
                    Some(p) if p < Usd::micros(0) => {
                        Err(bad(&format!("{s:?} is a negative price")))
                    }
                    Some(p) => Ok(Some(p)),
                    None => Err(bad(&format!("{s:?} is not a price in dollars"))),
                },
            }
        };
        let gpus = match cell(2) {
            "" if cell(1).is_empty() => 0,
            n => n
                .parse()
                .map_err(|_| bad("AcceleratorCount is not a whole number"))?,
        };
        if cell(0).is_empty() || cell(3).is_empty() {
            return Err(bad("InstanceType and Region are required"));
        }
        rows.push((
            line,
            Offer {
                instance_type: cell(0).to_string(),
                gpu: cell(1).to_string(),
                gpus,
                region: cell(3).to_string(),
                price: price(4)?,
                spot_price: price(5)?,
                flex_start_price: price(6)?,
            },
        ));
    }
    Ok(rows)
}

/// The user's own prices (committed-use discounts, negotiated rates): rows
/// in the catalog format that replace the list price of an instance type
/// (`*`: any with the row's GPU shape) in a region (`*`: every region),
/// each cell on its own, so a row with only `SpotPrice` leaves the
/// on-demand list price alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceList {
    rows: Vec<PriceRow>,
}

#[derive(Debug, Clone, PartialEq)]
struct PriceRow {
    offer: Offer,
    /// `prices.csv:12`.
    source: String,
}

impl PriceList {
    /// Reads a price list; `name` is how rows cite it (`prices.csv`).
    pub fn parse(name: &str, text: &str) -> Result<PriceList, String> {
        let mut rows = Vec::new();
        for (line, offer) in read_rows(text)? {
            if offer.instance_type == "*" && (offer.gpu.is_empty() || offer.gpus == 0) {
                return Err(format!(
                    "line {line}: a row for every instance type (`*`) names the GPU shape it prices (AcceleratorName, AcceleratorCount)"
                ));
            }
            rows.push(PriceRow {
                offer,
                source: format!("{name}:{line}"),
            });
        }
        Ok(PriceList { rows })
    }

    /// Both lists, `later`'s rows winning where both price the same thing.
    pub fn then(mut self, later: PriceList) -> PriceList {
        self.rows.extend(later.rows);
        self
    }

    /// The row that prices `instance_type` (whose GPU shape is `shape`)
    /// in `region` as `capacity`: one naming the instance type before one
    /// for its GPU shape (`*` as the instance type), the region before
    /// `*`, and of equals the last.
    fn find(
        &self,
        instance_type: &str,
        shape: Option<(&str, u32)>,
        region: &str,
        capacity: Capacity,
    ) -> Option<&PriceRow> {
        let of_type = |o: &Offer| o.instance_type == instance_type;
        let of_shape = |o: &Offer| {
            o.instance_type == "*"
                && shape.is_some_and(|(g, n)| o.gpu.eq_ignore_ascii_case(g) && o.gpus == n)
        };
        let kinds: [&dyn Fn(&Offer) -> bool; 2] = [&of_type, &of_shape];
        for matches in kinds {
            for r in [region, "*"] {
                let found = self.rows.iter().rev().find(|row| {
                    matches(&row.offer)
                        && row.offer.region == r
                        && row.offer.price_as(capacity).is_some()
                });
                if found.is_some() {
                    return found;
                }
            }
        }
        None
    }
}

impl Offer {
    /// Its price per hour as `capacity`, where it lists one.
    pub fn price_as(&self, capacity: Capacity) -> Option<Usd> {
        match capacity {
            Capacity::OnDemand => self.price,
            Capacity::Spot => self.spot_price,
            // Queued provisioning's VMs are flex-start VMs.
            Capacity::FlexStart | Capacity::Queued => self.flex_start_price,
        }
    }
}

/// What one node of a pool costs by the hour, and who said so.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    /// The GPU model and count per node, when the instance type has GPUs.
    pub gpu: Option<(String, u32)>,
    pub node_hour: Usd,
    /// `AWS catalog 2026-11-30`, `prices.csv:12`.
    pub source: String,
}

impl Catalog {
    /// The offer of exactly `instance_type` in `region`.
    pub fn offer(&self, instance_type: &str, region: &str) -> Option<&Offer> {
        self.offers
            .iter()
            .find(|o| o.instance_type == instance_type && o.region == region)
    }

    /// How rows priced from this catalog cite it.
    pub fn citation(&self) -> String {
        format!("{} catalog {}", self.cloud, self.taken)
    }
}

/// Prices a node of `instance_type` in `region`: the user's price list
/// first, then the cloud's catalog. The error says why it cannot be
/// priced; a caller lists such a pool as unpriced, never as free.
pub fn quote(
    catalog: Option<&Catalog>,
    prices: &PriceList,
    instance_type: &str,
    region: &str,
    capacity: Capacity,
) -> Result<Quote, String> {
    let listed = catalog.and_then(|c| c.offer(instance_type, region));
    let gpu = |o: &Offer| (o.gpus > 0).then(|| (o.gpu.clone(), o.gpus));
    // The instance type's GPU shape, from any region the catalog lists it in.
    let shape = catalog
        .and_then(|c| c.offers.iter().find(|o| o.instance_type == instance_type))
        .filter(|o| o.gpus > 0)
        .map(|o| (o.gpu.as_str(), o.gpus));
    if let Some(row) = prices.find(instance_type, shape, region, capacity) {
        // A price row may name a shape for a type the catalog does not
        // know; for one it knows, it prices the machine, never reshapes it.
        if let (Some((g, n)), Some((rg, rn))) = (shape, gpu(&row.offer)) {
            if !(g.eq_ignore_ascii_case(&rg) && n == rn) {
                return Err(format!(
                    "{} gives {instance_type} {rn} × {rg}, where the catalog has {n} × {g}; a price row cannot change what a machine holds",
                    row.source
                ));
            }
        }
        return Ok(Quote {
            gpu: gpu(&row.offer).or_else(|| listed.and_then(gpu)),
            node_hour: row.offer.price_as(capacity).unwrap_or_default(),
            source: row.source.clone(),
        });
    }
    let Some(cat) = catalog else {
        return Err(format!(
            "no price list row for {instance_type} in {region}, and this cloud has no catalog"
        ));
    };
    let Some(offer) = listed else {
        let elsewhere = cat.offers.iter().any(|o| o.instance_type == instance_type);
        return Err(match elsewhere {
            true => format!(
                "{} lists {instance_type}, not in {region}",
                cat.citation()
            ),
            false => format!(
                "{instance_type} is not in the {} (it lists GPU instance types and the CPU machines strata's modules run); give its price with --prices",
                cat.citation()
            ),
        });
    };
    let node_hour = offer.price_as(capacity).ok_or_else(|| {
        format!(
            "{} has no {} price for {instance_type} in {region}{}",
            cat.citation(),
            capacity.words(),
            match capacity {
                Capacity::FlexStart | Capacity::Queued => {
                    " (give one in a price list's FlexStartPrice column)"
                }
                _ => "",
            }
        )
    })?;
    Ok(Quote {
        gpu: gpu(offer),
        node_hour,
        source: cat.citation(),
    })
}

/// The offers of `gpus` × `gpu` in `catalogs` whose price per GPU-hour as
/// `capacity` (after the user's prices) is at most `cap`, cheapest first.
pub fn within_cap<'c>(
    catalogs: impl IntoIterator<Item = &'c Catalog>,
    prices: &PriceList,
    gpu: &str,
    gpus: u32,
    capacity: Capacity,
    cap: Usd,
) -> Vec<(&'c Catalog, &'c Offer, Usd)> {
    let mut found = Vec::new();
    for cat in catalogs {
        for o in cat
            .offers
            .iter()
            .filter(|o| o.gpu.eq_ignore_ascii_case(gpu) && o.gpus == gpus)
        {
            let priced = quote(Some(cat), prices, &o.instance_type, &o.region, capacity);
            if let Some(per_gpu) = priced.ok().and_then(|q| q.node_hour.per(gpus)) {
                if per_gpu <= cap {
                    found.push((cat, o, per_gpu));
                }
            }
        }
    }
    found.sort_by(|a, b| (a.2, &a.0.cloud, &a.1.region).cmp(&(b.2, &b.0.cloud, &b.1.region)));
    found
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
            ("big", Usd::parse("10.5"), Usd::parse("3"))
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

    #[test]
    fn a_price_is_never_negative_and_never_reshapes_a_machine() {
        let head = "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\n";
        let negative = PriceList::parse("prices.csv", &format!("{head}big,H100,8,r1,-1,\n"));
        assert!(negative.is_err_and(|e| e.contains("line 2") && e.contains("negative")));
        let c = Catalog::parse("Test", SMALL).expect("parses");
        let reshaped =
            PriceList::parse("prices.csv", &format!("{head}big,A100,4,r1,2,\n")).expect("parses");
        let why = quote(Some(&c), &reshaped, "big", "r1", Capacity::OnDemand)
            .expect_err("a row cannot reshape a machine the catalog knows");
        assert!(
            why.contains("prices.csv:2") && why.contains("8 × H100"),
            "{why}"
        );
    }

    #[test]
    fn a_price_list_overrides_cell_by_cell() {
        let c = Catalog::parse("Test", SMALL).expect("parses");
        let od = |prices: &PriceList, region: &str| {
            quote(Some(&c), prices, "big", region, Capacity::OnDemand)
        };
        let none = PriceList::default();
        let q = od(&none, "r1").expect("listed");
        assert_eq!(
            (q.node_hour.decimal(), q.source.as_str()),
            ("10.50".into(), "Test catalog 2026-11-30")
        );
        assert_eq!(q.gpu, Some(("H100".into(), 8)));
        let mine = PriceList::parse(
            "prices.csv",
            "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\nbig,,,*,9,\nbig,,,r2,8.25,\ncpu-box,,,r1,0.40,\n",
        )
        .expect("parses");
        let q = od(&mine, "r1").expect("priced");
        assert_eq!(
            (q.node_hour.decimal(), q.source.as_str()),
            ("9.00".into(), "prices.csv:2")
        );
        assert_eq!(
            q.gpu,
            Some(("H100".into(), 8)),
            "the catalog still says what GPUs"
        );
        assert_eq!(od(&mine, "r2").expect("priced").source, "prices.csv:3");
        let spot = quote(Some(&c), &mine, "big", "r1", Capacity::Spot).expect("list spot");
        assert_eq!(
            (spot.node_hour.decimal(), spot.source.as_str()),
            ("3.00".into(), "Test catalog 2026-11-30")
        );
        let cpu = quote(Some(&c), &mine, "cpu-box", "r1", Capacity::OnDemand).expect("priced");
        assert_eq!((cpu.gpu, cpu.node_hour.decimal()), (None, "0.40".into()));
        let e = quote(Some(&c), &none, "cpu-box", "r1", Capacity::OnDemand).expect_err("unpriced");
        assert!(e.contains("not in the Test catalog 2026-11-30"), "{e}");
        let e = quote(Some(&c), &none, "big", "r2", Capacity::Spot).expect_err("no spot");
        assert_eq!(e, "Test catalog 2026-11-30 has no spot price for big in r2");
        let e = quote(Some(&c), &none, "small", "r9", Capacity::Spot).expect_err("no region");
        assert_eq!(e, "Test catalog 2026-11-30 lists small, not in r9");
    }

    #[test]
    fn a_row_may_price_every_instance_type_of_a_gpu_shape() {
        let c = Catalog::parse("Test", SMALL).expect("parses");
        let head = "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\n";
        let mine = PriceList::parse("p.csv", &format!("{head}*,H100,8,*,7,\nbigger,,,r1,6,\n"))
            .expect("parses");
        let od =
            |t: &str, r: &str| quote(Some(&c), &mine, t, r, Capacity::OnDemand).expect("priced");
        assert_eq!(
            (od("big", "r2").node_hour.decimal(), od("big", "r2").source),
            ("7.00".into(), "p.csv:2".into())
        );
        assert_eq!(
            od("bigger", "r1").source,
            "p.csv:3",
            "the instance type's own row first"
        );
        assert_eq!(
            od("small", "r1").source,
            "Test catalog 2026-11-30",
            "another shape"
        );
        let e = PriceList::parse("p.csv", &format!("{head}*,,,r1,7,\n")).expect_err("no shape");
        assert!(e.contains("line 2") && e.contains("GPU shape"), "{e}");
    }

    #[test]
    fn offers_within_a_cap_come_cheapest_first() {
        let c = Catalog::parse("Test", SMALL).expect("parses");
        let found = within_cap(
            [&c],
            &PriceList::default(),
            "h100",
            8,
            Capacity::OnDemand,
            Usd::parse("1.4").expect("cap"),
        );
        let shown: Vec<_> = found
            .iter()
            .map(|(_, o, p)| format!("{} {} {}", o.instance_type, o.region, p.decimal()))
            .collect();
        assert_eq!(shown, ["big r1 1.3125", "big r2 1.375"]);
        let e = PriceList::parse(
            "p.csv",
            "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\n,,,r1,1,\n",
        )
        .expect_err("no type");
        assert!(e.contains("line 2"), "{e}");
    }
}
