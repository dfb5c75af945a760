//! The text form of a [`DistArray`] (the command line's `--from`/`--to`).

use super::array::{DistArray, GridOrder, Storage};
use super::axis::AxisDist;
use crate::error::{RedistError, Result};

impl DistArray {
    /// Parses a SPEC of comma-separated `key=value` items for an array of `shape`:
    ///
    /// * `grid=AxB…` — one dimension per distributed axis (default: all 1s);
    /// * `order=row|col` — how ranks fill the grid (default `row`; also `row-major`,
    ///   `column`, `column-major`, `c`, `r`);
    /// * `dist=D0,D1,…` — one [`AxisDist`] per axis (`block`, `balanced`, `cyclic`,
    ///   `cyclic(r)`, `*`); a single entry applies to every axis. Items after `dist=` that
    ///   contain no `=` continue the list.
    ///
    /// * `first=AxB…` — the grid coordinate of the process holding the first block along each
    ///   distributed axis (default all 0; ScaLAPACK's `RSRC`, `CSRC`);
    /// * `ranks=R0:R1:…` — the communicator rank at each grid position, in the grid's order
    ///   (default: rank = position);
    /// * `storage=row|col` — local arrays in C order (default) or column-major;
    /// * `lead=L` — the leading dimension of the local arrays (ScaLAPACK's `LLD`).
    ///
    /// Example: `grid=2x3,order=row,dist=cyclic(36),cyclic(36)`.
    pub fn parse_spec(spec: &str, shape: &[usize]) -> Result<Self> {
        let mut items = SpecItems::new(spec);
        let mut in_dist = false;
        let mut seen = Vec::new();
        for item in split_items(spec) {
            let t = item.trim();
            if t.is_empty() {
                return Err(items.bad(item, "an empty item (two commas in a row?)".into()));
            }
            let Some((key, value)) = t.split_once('=') else {
                if in_dist {
                    let dist = AxisDist::parse(t).map_err(|e| items.bad(t, e))?;
                    items.dists.push(dist);
                    continue;
                }
                let reason = "expected key=value with key grid, order or dist".into();
                return Err(items.bad(t, reason));
            };
            let key = key.trim().to_ascii_lowercase();
            if seen.contains(&key) {
                return Err(items.bad(t, format!("'{key}' given twice")));
            }
            seen.push(key.clone());
            in_dist = key == "dist";
            items.item(t, &key, value)?;
        }
        items.array(shape)
    }

    /// The SPEC text of this distribution (accepted by [`DistArray::parse_spec`]).
    pub fn spec(&self) -> String {
        let mut spec = format!(
            "grid={},order={}",
            join_x(self.grid()),
            match self.order() {
                GridOrder::Row => "row",
                GridOrder::Column => "col",
            },
        );
        let firsts = self.first_procs();
        if firsts.iter().any(|&f| f != 0) {
            spec += &format!(",first={}", join_x(&firsts));
        }
        if let Some(ranks) = self.ranks() {
            let ranks: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
            spec += &format!(",ranks={}", ranks.join(":"));
        }
        if self.storage() == Storage::ColumnMajor {
            spec += ",storage=col";
        }
        if let Some(lead) = self.lead() {
            spec += &format!(",lead={lead}");
        }
        spec + ",dist=" + &list(self.dists())
    }
}

/// The items of a SPEC, split on the commas outside parentheses.
fn split_items(spec: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in spec.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&spec[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&spec[start..]);
    items
}

/// What a SPEC's items gave so far ([`DistArray::parse_spec`]).
struct SpecItems<'a> {
    spec: &'a str,
    grid: Option<Vec<usize>>,
    order: GridOrder,
    dists: Vec<AxisDist>,
    first: Option<Vec<usize>>,
    ranks: Option<Vec<usize>>,
    storage: Storage,
    lead: Option<usize>,
}

impl<'a> SpecItems<'a> {
    fn new(spec: &'a str) -> Self {
        Self {
            spec,
            grid: None,
            order: GridOrder::Row,
            dists: Vec::new(),
            first: None,
            ranks: None,
            storage: Storage::RowMajor,
            lead: None,
        }
    }

    /// The error for the item near `near`.
    fn bad(&self, near: &str, reason: String) -> RedistError {
        RedistError::BadDistSpec {
            spec: self.spec.to_string(),
            near: near.to_string(),
            reason,
        }
    }

    /// `value` as a list of numbers separated by `sep` (a list of `what`).
    fn numbers(&self, t: &str, value: &str, sep: &[char], what: &str) -> Result<Vec<usize>> {
        value
            .split(sep)
            .map(|n| n.trim().parse::<usize>())
            .collect::<std::result::Result<Vec<usize>, _>>()
            .map_err(|_| self.bad(t, format!("'{value}' is not a list of {what}")))
    }

    /// The item `t`, `key=value`.
    fn item(&mut self, t: &str, key: &str, value: &str) -> Result<()> {
        let word = value.trim().to_ascii_lowercase();
        match key {
            "grid" => {
                let mut dims = Vec::new();
                for part in value.split(['x', 'X']) {
                    match part.trim().parse::<usize>() {
                        Ok(n) if n > 0 => dims.push(n),
                        _ => {
                            return Err(self.bad(
                                t,
                                format!("grid dimension '{part}' is not a positive integer (expected e.g. grid=2x3)"),
                            ))
                        }
                    }
                }
                self.grid = Some(dims);
            }
            "order" => {
                self.order = match word.as_str() {
                    "row" | "row-major" | "r" => GridOrder::Row,
                    "col" | "column" | "column-major" | "c" => GridOrder::Column,
                    other => {
                        let reason = format!("unknown grid order '{other}' (expected row or col)");
                        return Err(self.bad(t, reason));
                    }
                }
            }
            "first" => {
                let what = "coordinates (e.g. 1x0)";
                self.first = Some(self.numbers(t, value, &['x', 'X'], what)?);
            }
            "ranks" => self.ranks = Some(self.numbers(t, value, &[':'], "ranks (e.g. 3:1:2:0)")?),
            "storage" => {
                self.storage = match word.as_str() {
                    "row" | "c" | "row-major" => Storage::RowMajor,
                    "col" | "column" | "f" | "column-major" => Storage::ColumnMajor,
                    other => {
                        let reason = format!("unknown storage '{other}' (expected row or col)");
                        return Err(self.bad(t, reason));
                    }
                }
            }
            "lead" => match value.trim().parse::<usize>() {
                Ok(n) if n > 0 => self.lead = Some(n),
                _ => {
                    let reason = format!("lead '{value}' is not a positive integer");
                    return Err(self.bad(t, reason));
                }
            },
            "dist" => {
                let dist = AxisDist::parse(value).map_err(|e| self.bad(t, e))?;
                self.dists.push(dist);
            }
            other => {
                return Err(self.bad(
                    t,
                    format!(
                        "unknown key '{other}' (expected grid, order, dist, first, ranks, \
                         storage or lead)"
                    ),
                ))
            }
        }
        Ok(())
    }

    /// The distribution the items describe, for an array of `shape`.
    fn array(self, shape: &[usize]) -> Result<DistArray> {
        let spec = self.spec;
        let mut dists = self.dists.clone();
        if dists.is_empty() {
            return Err(self.bad(spec, "no dist= given (e.g. dist=cyclic(64),*)".into()));
        }
        if dists.len() == 1 && shape.len() > 1 {
            dists = vec![dists[0]; shape.len()];
        }
        if dists.len() != shape.len() {
            return Err(self.bad(
                &list(&dists),
                format!(
                    "{} distributions for the {}-dimensional shape {shape:?}",
                    dists.len(),
                    shape.len()
                ),
            ));
        }
        let distributed = dists.iter().filter(|d| **d != AxisDist::Local).count();
        let grid = self.grid.clone().unwrap_or_else(|| vec![1; distributed]);
        if grid.len() != distributed {
            return Err(self.bad(
                &format!("grid={}", join_x(&grid)),
                format!(
                    "the grid has {} dimensions but {distributed} axes are distributed ({})",
                    grid.len(),
                    list(&dists)
                ),
            ));
        }
        let fail = |e: RedistError| self.bad(spec, e.to_string());
        let mut array = DistArray::new(shape.to_vec(), grid, self.order, dists)
            .and_then(|a| a.with_storage(self.storage, self.lead))
            .map_err(fail)?;
        if let Some(first) = self.first.clone() {
            array = array.with_first_procs(first).map_err(fail)?;
        }
        if let Some(ranks) = self.ranks.clone() {
            array = array.with_ranks(ranks).map_err(fail)?;
        }
        Ok(array)
    }
}

pub(super) fn list(dists: &[AxisDist]) -> String {
    dists
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn join_x(v: &[usize]) -> String {
    v.iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_round_trip_and_errors() {
        let a = DistArray::parse_spec("grid=2x3,order=row,dist=cyclic(36),cyclic(36)", &[100, 50])
            .unwrap();
        assert_eq!(a.dists(), &[AxisDist::BlockCyclic(36); 2]);
        assert_eq!(DistArray::parse_spec(&a.spec(), &[100, 50]).unwrap(), a);
        let b =
            DistArray::parse_spec("dist=block,*,cyclic,grid=4x2,order=col", &[5, 6, 7]).unwrap();
        assert_eq!(b.grid(), &[4, 2]);
        assert_eq!(
            DistArray::parse_spec("dist=*", &[5, 6])
                .unwrap()
                .grid_size(),
            1
        );
        for (spec, near) in [
            ("grid=2x0,dist=block", "grid=2x0"),
            ("grid=2,dist=cyclic(0)", "dist=cyclic(0)"),
            ("grid=2,dist=cyclic(3", "dist=cyclic(3"),
            ("grid=2x3,dist=block,block,block", "block,block,block"),
            ("grid=2x3,dist=block,*", "grid=2x3"),
            ("grid=2,order=diagonal,dist=block", "order=diagonal"),
            ("grid=2,colour=red,dist=block", "colour=red"),
            ("grid=2", "grid=2"),
            ("grid=2,,dist=block", ""),
            ("grid=2,grid=2,dist=block", "grid=2"),
        ] {
            match DistArray::parse_spec(spec, &[10, 10]) {
                Err(RedistError::BadDistSpec { near: n, .. }) => assert_eq!(n, near, "{spec}"),
                other => panic!("{spec}: {other:?}"),
            }
        }
    }

    #[test]
    fn general_keys_round_trip() {
        let spec = "grid=2x3,order=col,first=1x2,ranks=5:4:3:2:1:0,storage=col,lead=9,\
                    dist=cyclic(2),cyclic(3)";
        let a = DistArray::parse_spec(spec, &[12, 13]).unwrap();
        assert_eq!(a.first_procs(), vec![1, 2]);
        assert_eq!(a.ranks(), Some(&[5, 4, 3, 2, 1, 0][..]));
        assert_eq!((a.storage(), a.lead()), (Storage::ColumnMajor, Some(9)));
        assert_eq!(DistArray::parse_spec(&a.spec(), &[12, 13]).unwrap(), a);
        for (spec, near) in [
            (
                "grid=2x1,first=2x0,dist=block",
                "grid=2x1,first=2x0,dist=block",
            ),
            ("grid=2x1,first=a,dist=block", "first=a"),
            (
                "grid=2x1,ranks=0:0,dist=block",
                "grid=2x1,ranks=0:0,dist=block",
            ),
            ("grid=2x1,storage=diagonal,dist=block", "storage=diagonal"),
            ("grid=2x1,lead=0,dist=block", "lead=0"),
        ] {
            match DistArray::parse_spec(spec, &[10, 10]) {
                Err(RedistError::BadDistSpec { near: n, .. }) => assert_eq!(n, near, "{spec}"),
                other => panic!("{spec}: {other:?}"),
            }
        }
    }
}
