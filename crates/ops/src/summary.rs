//! Counts of the rows whose numbers are not plain model output, for the
//! one summary rprof prints on stderr at the end.

use std::borrow::Cow;

use crate::estimate::{Mode, Outcome};

/// A count and the first example.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// How many rows.
    pub count: u64,
    /// Row index (1-based) and reason of the first.
    pub first: Option<(u64, Cow<'static, str>)>,
}

impl Tally {
    fn add(&mut self, row: u64, why: impl FnOnce() -> Cow<'static, str>) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((row, why()));
        }
    }
}

/// What a run saw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Rows printed.
    pub rows: u64,
    /// `--compat`: rows where apex.pyprof would have aborted.
    pub aborted: Tally,
    /// Default mode: rows with values that could not be computed (`na`).
    pub partial: Tally,
    /// Rows of ops without a model (0 FLOPs, 0 bytes).
    pub no_model: Tally,
    /// Stock PyTorch rows whose element type is unknown (`?`, bytes `na`).
    pub dtype_unknown: Tally,
    /// Stock PyTorch rows without `sizes` (profiled without
    /// `record_shapes`).
    pub no_sizes: Tally,
    /// Stock PyTorch rows whose numbers rest on an assumption.
    pub estimated: Tally,
}

impl Summary {
    /// Count one row.
    pub fn add(&mut self, row: u64, outcome: &Outcome, op: &str) {
        self.rows += 1;
        match outcome {
            Outcome::ApexAbort(why) => self.aborted.add(row, || why.clone()),
            Outcome::Partial(why) => self.partial.add(row, || why.clone()),
            Outcome::NoModel => self.no_model.add(row, || format!("op '{op}'").into()),
            Outcome::DtypeUnknown => self.dtype_unknown.add(row, || format!("op '{op}'").into()),
            Outcome::NoSizes => self.no_sizes.add(row, || format!("op '{op}'").into()),
            Outcome::Estimated(why) => self.estimated.add(row, || why.clone()),
            Outcome::Modelled | Outcome::NoMarker => {}
        }
    }

    /// Merge another summary (of later rows).
    pub fn merge(&mut self, other: Summary) {
        fn m(a: &mut Tally, b: Tally) {
            a.count += b.count;
            if a.first.is_none() {
                a.first = b.first;
            }
        }
        self.rows += other.rows;
        m(&mut self.aborted, other.aborted);
        m(&mut self.partial, other.partial);
        m(&mut self.no_model, other.no_model);
        m(&mut self.dtype_unknown, other.dtype_unknown);
        m(&mut self.no_sizes, other.no_sizes);
        m(&mut self.estimated, other.estimated);
    }

    /// The lines to print on stderr (none when there is nothing to say).
    /// `--compat` only reports apex's aborts.
    pub fn messages(&self, mode: Mode) -> Vec<String> {
        let mut out = Vec::new();
        let first = |t: &Tally| match &t.first {
            Some((row, why)) => format!("; first at row {row}: {why}"),
            None => String::new(),
        };
        if self.aborted.count > 0 {
            out.push(format!(
                "{} rows where apex.pyprof would have aborted (printed with na/0 values){}",
                self.aborted.count,
                first(&self.aborted)
            ));
        }
        if mode == Mode::Fixed {
            if self.partial.count > 0 {
                out.push(format!(
                    "{} rows with values that could not be computed (printed as na){}",
                    self.partial.count,
                    first(&self.partial)
                ));
            }
            if self.no_model.count > 0 {
                out.push(format!(
                    "{} rows of ops without a model (0 FLOPs, 0 bytes){}",
                    self.no_model.count,
                    first(&self.no_model)
                ));
            }
            if self.no_sizes.count > 0 {
                out.push(format!(
                    "{} rows of PyTorch ops whose markers have no sizes (params, FLOPs and bytes na; profile with record_shapes=True or --pytorch=autograd-shapes-nvtx){}",
                    self.no_sizes.count,
                    first(&self.no_sizes)
                ));
            }
            if self.dtype_unknown.count > 0 {
                out.push(format!(
                    "{} rows whose dtype the kernel name does not tell (? in params, bytes na){}",
                    self.dtype_unknown.count,
                    first(&self.dtype_unknown)
                ));
            }
            if self.estimated.count > 0 {
                out.push(format!(
                    "{} rows with estimated shapes{}",
                    self.estimated.count,
                    first(&self.estimated)
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_first() {
        let mut s = Summary::default();
        s.add(1, &Outcome::Modelled, "mm");
        s.add(2, &Outcome::ApexAbort("x".into()), "mm");
        let mut t = Summary::default();
        t.add(3, &Outcome::ApexAbort("y".into()), "mm");
        t.add(4, &Outcome::NoModel, "layer_norm");
        s.merge(t);
        assert_eq!(s.rows, 4);
        assert_eq!(s.aborted.count, 2);
        assert_eq!(s.messages(Mode::Apex), vec!["2 rows where apex.pyprof would have aborted (printed with na/0 values); first at row 2: x".to_owned()]);
        assert_eq!(s.messages(Mode::Fixed).len(), 2);
        let mut u = Summary::default();
        u.add(5, &Outcome::DtypeUnknown, "mm");
        u.add(6, &Outcome::NoSizes, "linear");
        u.add(7, &Outcome::Estimated("conv output".into()), "conv2d");
        u.add(8, &Outcome::DtypeUnknown, "add");
        s.merge(u);
        assert_eq!(s.dtype_unknown.count, 2);
        let m = s.messages(Mode::Fixed);
        assert_eq!(m.len(), 5);
        assert!(
            m[3].starts_with("2 rows whose dtype the kernel name does not tell"),
            "{}",
            m[3]
        );
        assert!(m[3].ends_with("first at row 5: op 'mm'"), "{}", m[3]);
        assert!(m[2].starts_with("1 rows of PyTorch ops whose markers have no sizes"));
        assert_eq!(s.messages(Mode::Apex).len(), 1);
    }
}
