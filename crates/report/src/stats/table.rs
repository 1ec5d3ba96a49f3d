//! A computed report: headings with their units, and typed cells.

use rprof_model::{NameId, Names};

/// What a column's numbers are, which decides its heading suffix and how
/// `--timeunit` / `--memunit` convert it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Plain value (counts, ids, names).
    None,
    /// Percentage (`Time (%)`).
    Percent,
    /// A duration, ns.
    Duration,
    /// A timestamp, ns.
    Timestamp,
    /// Bytes.
    Bytes,
    /// Bytes per second.
    Throughput,
}

/// One column.
#[derive(Clone, Debug)]
pub struct Col {
    /// Heading without the unit (`Total Time`).
    pub head: &'static str,
    /// Unit of the values.
    pub unit: Unit,
}

/// Shorthand for a column.
pub const fn col(head: &'static str, unit: Unit) -> Col {
    Col { head, unit }
}

/// One value.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// No value (SQL NULL): empty in text output, `null` in JSON.
    Null,
    /// An integer.
    Int(i64),
    /// A value nsys rounds to one decimal (averages, medians, std devs,
    /// percentages): already rounded.
    Round1(f64),
    /// A value nsys prints unrounded (byte averages).
    Float(f64),
    /// Text.
    Text(String),
    /// A name of the report's [`Names`], printed as its text. Rows of a
    /// large report name their text rather than copy it: the width pass of
    /// the text layouts then measures the names in arena order instead of
    /// fetching each at random, and the writing pass fetches them ahead in
    /// batches ([`Table::for_each_row`]).
    Name(NameId),
}

impl Cell {
    /// `Int` or `Null`.
    pub fn opt(v: Option<i64>) -> Cell {
        v.map_or(Cell::Null, Cell::Int)
    }

    /// Rounded to one decimal as SQLite's `round(x, 1)` (half away from
    /// zero), or `Null`.
    pub fn r1(v: Option<f64>) -> Cell {
        v.map_or(Cell::Null, |x| Cell::Round1(round1(x)))
    }

    /// A numeric value for sorting (`Null` lowest).
    pub fn num(&self) -> f64 {
        match self {
            Cell::Int(i) => *i as f64,
            Cell::Round1(f) | Cell::Float(f) => *f,
            Cell::Null | Cell::Text(_) | Cell::Name(_) => f64::NEG_INFINITY,
        }
    }
}

/// `round(x, 1)` as SQLite computes it: half away from zero.
pub fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Rows made one at a time, for reports with millions of rows: the renderer
/// asks for each row into one reused buffer, so no report holds its rows as
/// cells (millions of `Vec<Cell>` rows with owned names took GBs). Rows
/// are asked for from several threads at once, in chunks.
pub trait RowSource: Sync {
    /// Number of rows.
    fn len(&self) -> usize;

    /// Whether there are no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Write row `i` into `out` (one cell per column); names from `names`.
    fn fill(&self, i: usize, names: &Names, out: &mut [Cell]);
}

/// Set `cell` to text `s`, reusing its buffer when it holds text already.
pub fn set_text(cell: &mut Cell, s: &str) {
    if let Cell::Text(t) = cell {
        t.clear();
        t.push_str(s);
    } else {
        *cell = Cell::Text(s.to_owned());
    }
}

/// A finished report.
pub struct Table {
    /// nsys's report name (`cuda_gpu_kern_sum`), with its argument if any
    /// (`cuda_gpu_kern_sum:base`).
    pub report: String,
    /// nsys's display name (`CUDA GPU Kernel Summary`).
    pub title: &'static str,
    /// Columns.
    pub cols: Vec<Col>,
    /// Rows, when held as cells.
    pub rows: Vec<Vec<Cell>>,
    /// Rows made on demand (then `rows` is empty).
    pub source: Option<Box<dyn RowSource>>,
    /// Why the report has no rows, when the input cannot answer it.
    pub skipped: Option<String>,
    /// What the numbers are (differences from nsys, substitutions).
    pub notes: Vec<String>,
}

impl Table {
    /// An empty table for `report`.
    pub fn new(report: impl Into<String>, title: &'static str, cols: Vec<Col>) -> Table {
        Table {
            report: report.into(),
            title,
            cols,
            rows: Vec::new(),
            source: None,
            skipped: None,
            notes: Vec::new(),
        }
    }

    /// Number of rows.
    pub fn row_count(&self) -> usize {
        self.source.as_ref().map_or(self.rows.len(), |s| s.len())
    }

    /// Hand each row to `f`, in order, for output that prints its names:
    /// the names of the next rows are fetched ahead. The rows of a large
    /// report come in an order of their own (total time), their names lie
    /// in the arena in the order they were read, so each name is a cache
    /// and TLB miss (about half a microsecond on a 4.6 M-name export)
    /// unless fetched ahead.
    pub fn for_each_row<E>(
        &self,
        names: &Names,
        f: impl FnMut(&[Cell]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.rows_with(names, true, f)
    }

    /// Hand each row to `f`, in order, its [`Cell::Name`]s unresolved (for
    /// a pass that needs no name text).
    pub fn for_each_row_unfetched<E>(
        &self,
        names: &Names,
        f: impl FnMut(&[Cell]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.rows_with(names, false, f)
    }

    fn rows_with<E>(
        &self,
        names: &Names,
        fetch: bool,
        f: impl FnMut(&[Cell]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.rows_in(names, fetch, 0..self.row_count(), f)
    }

    /// Hand rows `range` to `f`, in order (`fetch`: as
    /// [`for_each_row`](Table::for_each_row), else as
    /// [`for_each_row_unfetched`](Table::for_each_row_unfetched)).
    pub fn rows_in<E>(
        &self,
        names: &Names,
        fetch: bool,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(&[Cell]) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some(src) = &self.source else {
            let rows = self.rows.get(range).unwrap_or(&[]);
            return rows.iter().try_for_each(|r| f(r));
        };
        let width = self.cols.len();
        let n = range.end.min(src.len());
        if width == 0 {
            // no cells to fill (and no chunks of zero cells)
            return (range.start..n).try_for_each(|_| f(&[]));
        }
        if !fetch {
            let mut buf = vec![Cell::Null; width];
            for i in range.start..n {
                src.fill(i, names, &mut buf);
                f(&buf)?;
            }
            return Ok(());
        }
        // three batches of rows: while one is handed out, the texts of the
        // next one's names are fetched, and where the one after's end
        let mut bufs = [
            vec![Cell::Null; width * PREFETCH_ROWS],
            vec![Cell::Null; width * PREFETCH_ROWS],
            vec![Cell::Null; width * PREFETCH_ROWS],
        ];
        let batch = |start: usize| start..(start + PREFETCH_ROWS).min(n);
        let fill = |buf: &mut [Cell], start: usize| {
            let rows = batch(start);
            let len = rows.len() * width;
            for (i, row) in rows.zip(buf.chunks_mut(width)) {
                src.fill(i, names, row);
            }
            for_names(&buf[..len], |id| names.prefetch_end(id));
        };
        let start = range.start;
        for (k, buf) in bufs.iter_mut().enumerate().take(2) {
            let at = start + k * PREFETCH_ROWS;
            if at < n {
                fill(buf, at);
            }
        }
        if start + PREFETCH_ROWS < n {
            let len = batch(start + PREFETCH_ROWS).len() * width;
            for_names(&bufs[1][..len], |id| names.prefetch_text(id));
        }
        let mut start = start;
        let mut k = 0;
        while start < n {
            let rows = batch(start);
            let (next, after) = (start + PREFETCH_ROWS, start + 2 * PREFETCH_ROWS);
            if after < n {
                fill(&mut bufs[(k + 2) % 3], after);
            }
            if next < n {
                let len = batch(next).len() * width;
                for_names(&bufs[(k + 1) % 3][..len], |id| names.prefetch_text(id));
            }
            for row in bufs[k % 3].chunks(width).take(rows.len()) {
                f(row)?;
            }
            start = next;
            k += 1;
        }
        Ok(())
    }

    /// Format the rows on the thread pool and hand their bytes to `sink`
    /// in row order: `format(first, row, scratch, out)` appends the row's
    /// text to `out` (`first`: whether it is the table's first row;
    /// `scratch`: buffers of the chunk's own). Rows go in chunks; a round of chunks is formatted while the
    /// previous one is written, so that at most three rounds are held.
    /// Same bytes for any number of threads.
    pub fn format_rows<S: Default, E>(
        &self,
        names: &Names,
        format: impl Fn(bool, &[Cell], &mut S, &mut Vec<u8>) + Sync,
        mut sink: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        use rayon::prelude::*;
        let n = self.row_count();
        let round = CHUNK_ROWS * CHUNKS_PER_ROUND;
        // the chunks' buffers, used again once written (fresh ones each
        // time were fresh pages for the kernel to clear: a share of the
        // system time of a large report)
        let pool: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
        let take = || {
            let mut b = pool
                .lock()
                .ok()
                .and_then(|mut p| p.pop())
                .unwrap_or_default();
            b.clear();
            b
        };
        let give = |parts: Vec<Vec<u8>>| {
            if let Ok(mut p) = pool.lock() {
                p.extend(parts);
            }
        };
        // rows a..b as text
        let chunk = |a: usize, b: usize| -> Vec<u8> {
            let mut out = take();
            let mut scratch = S::default();
            let mut i = a;
            let _ = self.rows_in(names, true, a..b, |row| -> Result<(), ()> {
                format(i == 0, row, &mut scratch, &mut out);
                i += 1;
                Ok(())
            });
            out
        };
        if n <= CHUNK_ROWS {
            // small tables: no threads
            return sink(&chunk(0, n));
        }
        let format_round = |start: usize| -> Vec<Vec<u8>> {
            let end = (start + round).min(n);
            (start..end)
                .step_by(CHUNK_ROWS)
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|a| chunk(a, (a + CHUNK_ROWS).min(end)))
                .collect()
        };
        std::thread::scope(|sc| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Vec<u8>>>(1);
            sc.spawn(move || {
                for start in (0..n).step_by(round) {
                    // the writer stopped (an error): stop too
                    if tx.send(format_round(start)).is_err() {
                        break;
                    }
                }
            });
            for parts in rx {
                for part in &parts {
                    sink(part)?;
                }
                give(parts);
            }
            Ok(())
        })
    }

    /// The same table, marked as not applicable.
    pub fn skip(mut self, why: impl Into<String>) -> Table {
        self.skipped = Some(why.into());
        self
    }
}

/// Rows per batch of [`Table::for_each_row`].
const PREFETCH_ROWS: usize = 32;

/// Rows per chunk of [`Table::format_rows`], and chunks per round.
const CHUNK_ROWS: usize = 2048;
const CHUNKS_PER_ROUND: usize = 8;

/// `f` of every [`Cell::Name`] in `cells` ([`Table::for_each_row`]
/// fetches names ahead with it).
fn for_names(cells: &[Cell], mut f: impl FnMut(NameId)) {
    for c in cells {
        if let Cell::Name(id) = c {
            f(*id);
        }
    }
}

/// Summary statistics of one group's samples, as nsys's SQL computes them.
/// The first sample is held inline: most groups of a large export (NVTX
/// ranges with unique names) have one, and need no allocation.
#[derive(Clone, Debug, Default)]
pub struct Agg {
    first: Option<i64>,
    rest: Vec<i64>,
}

impl Agg {
    /// Add one sample.
    pub fn add(&mut self, x: i64) {
        if self.first.is_none() {
            self.first = Some(x);
        } else {
            self.rest.push(x);
        }
    }

    /// Number of samples.
    pub fn count(&self) -> i64 {
        i64::from(self.first.is_some()) + self.rest.len() as i64
    }

    /// Exact sum (saturated to i64).
    pub fn sum(&self) -> i64 {
        let s: i128 = self
            .first
            .iter()
            .chain(&self.rest)
            .map(|&x| i128::from(x))
            .sum();
        s.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    /// Finish: sorts the samples.
    pub fn finish(self) -> Summary {
        let Agg { first, mut rest } = self;
        if let Some(f) = first {
            rest.push(f);
        }
        let samples = {
            rest.sort_unstable();
            rest
        };
        Self::summarize(&samples)
    }

    /// Statistics of sorted samples.
    pub fn summarize(samples: &[i64]) -> Summary {
        let n = samples.len();
        let sum: i128 = samples.iter().map(|&x| i128::from(x)).sum();
        if n == 0 {
            return Summary::default();
        }
        let mean = sum as f64 / n as f64;
        let median = if n % 2 == 1 {
            MedianValue::Int(samples[n / 2])
        } else {
            MedianValue::Half(
                (i128::from(samples[n / 2 - 1]) + i128::from(samples[n / 2])) as f64 / 2.0,
            )
        };
        // sample standard deviation (n - 1), 0 for one sample as nsys's
        // stdev() returns; exact numerator in i128 where it fits
        let stddev = if n < 2 {
            0.0
        } else {
            let ni = n as i128;
            let sq: Option<i128> = samples.iter().try_fold(0i128, |a, &x| {
                a.checked_add(i128::from(x).checked_mul(i128::from(x))?)
            });
            let num = sq
                .and_then(|sq| ni.checked_mul(sq))
                .and_then(|a| a.checked_sub(sum.checked_mul(sum)?));
            let var = match num {
                Some(num) => num.max(0) as f64 / (ni * (ni - 1)) as f64,
                None => {
                    let m = mean;
                    samples
                        .iter()
                        .map(|&x| (x as f64 - m) * (x as f64 - m))
                        .sum::<f64>()
                        / (n - 1) as f64
                }
            };
            var.sqrt()
        };
        Summary {
            count: n as i64,
            total: sum.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
            mean: Some(mean),
            median: Some(median),
            min: samples.first().copied(),
            max: samples.last().copied(),
            stddev: Some(stddev),
        }
    }
}

/// A median: a sample (odd count) or the mean of the middle two.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MedianValue {
    /// The middle sample.
    Int(i64),
    /// The mean of the two middle samples.
    Half(f64),
}

impl MedianValue {
    /// As a float.
    pub fn value(self) -> f64 {
        match self {
            MedianValue::Int(i) => i as f64,
            MedianValue::Half(f) => f,
        }
    }
}

/// What [`Agg::finish`] computes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    /// Samples.
    pub count: i64,
    /// Sum.
    pub total: i64,
    /// Mean.
    pub mean: Option<f64>,
    /// Median.
    pub median: Option<MedianValue>,
    /// Smallest.
    pub min: Option<i64>,
    /// Largest.
    pub max: Option<i64>,
    /// Sample standard deviation (0 for one sample).
    pub stddev: Option<f64>,
}

impl Summary {
    /// Avg, Med, Min, Max, StdDev cells as nsys's duration columns print
    /// them (one decimal for avg, median and std dev).
    pub fn dur_cells(&self) -> [Cell; 5] {
        [
            Cell::r1(self.mean),
            Cell::r1(self.median.map(MedianValue::value)),
            Cell::opt(self.min),
            Cell::opt(self.max),
            Cell::r1(self.stddev),
        ]
    }

    /// Avg, Med, Min, Max, StdDev cells as nsys's byte columns print them
    /// (unrounded).
    pub fn mem_cells(&self) -> [Cell; 5] {
        [
            self.mean.map_or(Cell::Null, Cell::Float),
            match self.median {
                Some(MedianValue::Int(i)) => Cell::Int(i),
                Some(MedianValue::Half(f)) => Cell::Float(f),
                None => Cell::Null,
            },
            Cell::opt(self.min),
            Cell::opt(self.max),
            self.stddev.map_or(Cell::Null, Cell::Float),
        ]
    }
}

/// A [`Summary`] in 56 bytes (reports with millions of rows keep one per
/// row): the duration cells it prints, `Null` when it has no samples.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stat {
    /// Samples.
    pub count: i64,
    /// Sum.
    pub total: i64,
    mean: f64,
    median: f64,
    min: i64,
    max: i64,
    stddev: f64,
}

impl Stat {
    /// Of sorted samples.
    pub fn of_sorted(samples: &[i64]) -> Stat {
        Stat::from(&Agg::summarize(samples))
    }

    /// Avg, Med, Min, Max, StdDev as [`Summary::dur_cells`] prints them,
    /// into `out[..5]`.
    pub fn dur_cells_into(&self, out: &mut [Cell]) {
        if self.count == 0 {
            out[..5].fill(Cell::Null);
            return;
        }
        out[0] = Cell::Round1(round1(self.mean));
        out[1] = Cell::Round1(round1(self.median));
        out[2] = Cell::Int(self.min);
        out[3] = Cell::Int(self.max);
        out[4] = Cell::Round1(round1(self.stddev));
    }
}

impl From<&Summary> for Stat {
    fn from(s: &Summary) -> Stat {
        Stat {
            count: s.count,
            total: s.total,
            mean: s.mean.unwrap_or(0.0),
            median: s.median.map_or(0.0, MedianValue::value),
            min: s.min.unwrap_or(0),
            max: s.max.unwrap_or(0),
            stddev: s.stddev.unwrap_or(0.0),
        }
    }
}

/// `round(part * 100.0 / whole, 1)`; `Null` when `whole` is 0.
pub fn percent(part: i64, whole: i128) -> Cell {
    if whole == 0 {
        Cell::Null
    } else {
        Cell::Round1(round1(part as f64 * 100.0 / whole as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nsys_median_and_stddev() {
        let mut a = Agg::default();
        for x in [2002921, 2004041, 2005033] {
            a.add(x);
        }
        let s = a.finish();
        assert_eq!(s.median, Some(MedianValue::Int(2004041)));
        // nsys prints 1056.6 for these three
        assert_eq!(round1(s.stddev.unwrap_or(0.0)), 1056.6);
        assert_eq!(round1(s.mean.unwrap_or(0.0)), 2003998.3);
        let mut b = Agg::default();
        b.add(5);
        let s = b.finish();
        assert_eq!(s.stddev, Some(0.0));
        let mut c = Agg::default();
        for x in [1, 2, 4, 9] {
            c.add(x);
        }
        assert_eq!(c.finish().median, Some(MedianValue::Half(3.0)));
    }

    /// Rows `i`: a name (every third row none), the row number, a text.
    struct Numbered {
        n: usize,
        ids: Vec<NameId>,
    }

    impl RowSource for Numbered {
        fn len(&self) -> usize {
            self.n
        }

        fn fill(&self, i: usize, _names: &Names, out: &mut [Cell]) {
            out[0] = if i.is_multiple_of(3) {
                Cell::Null
            } else {
                Cell::Name(self.ids[i % self.ids.len()])
            };
            out[1] = Cell::Int(i as i64);
            set_text(&mut out[2], &format!("r{i}"));
        }
    }

    fn numbered(n: usize) -> (Table, Names) {
        let mut names = Names::default();
        // ids out of arena order, as a report's rows are
        let ids: Vec<NameId> = (0..97)
            .map(|k| names.intern(&format!("name {k}")))
            .rev()
            .collect();
        let mut t = Table::new(
            "test",
            "Test",
            vec![
                col("Name", Unit::None),
                col("N", Unit::None),
                col("T", Unit::None),
            ],
        );
        t.source = Some(Box::new(Numbered { n, ids }));
        (t, names)
    }

    /// The rows as `fill` makes them, one by one.
    fn plain(t: &Table, names: &Names, range: std::ops::Range<usize>) -> Vec<Vec<Cell>> {
        let src = t.source.as_ref().unwrap();
        range
            .map(|i| {
                let mut row = vec![Cell::Null; t.cols.len()];
                src.fill(i, names, &mut row);
                row
            })
            .collect()
    }

    /// The batched walks (names fetched ahead, or not) hand out the rows
    /// `fill` makes, in order, for any count and range (batch edges
    /// included).
    #[test]
    fn batched_rows_are_the_plain_rows() {
        for n in [0, 1, 31, 32, 33, 64, 95, 96, 97, 1000] {
            let (t, names) = numbered(n);
            for fetch in [true, false] {
                let mut got = Vec::new();
                let _ = t.rows_in(&names, fetch, 0..n, |r| -> Result<(), ()> {
                    got.push(r.to_vec());
                    Ok(())
                });
                assert_eq!(got, plain(&t, &names, 0..n), "{n} {fetch}");
            }
            let (a, b) = (n / 3, n - n / 4);
            let mut got = Vec::new();
            let _ = t.rows_in(&names, true, a..b, |r| -> Result<(), ()> {
                got.push(r.to_vec());
                Ok(())
            });
            assert_eq!(got, plain(&t, &names, a..b), "{n} {a}..{b}");
        }
    }

    /// Rows formatted in parallel chunks come out as one thread formats
    /// them in order, the first row flagged, and an error of the sink
    /// stops the walk.
    #[test]
    fn parallel_format_keeps_the_order() {
        for n in [
            0,
            5,
            CHUNK_ROWS,
            CHUNK_ROWS + 1,
            CHUNK_ROWS * CHUNKS_PER_ROUND * 2 + 7,
        ] {
            let (t, names) = numbered(n);
            let line = |first: bool, r: &[Cell], out: &mut Vec<u8>| {
                let name = match &r[0] {
                    Cell::Name(id) => names.get(*id),
                    _ => "-",
                };
                let (Cell::Int(i), Cell::Text(s)) = (&r[1], &r[2]) else {
                    panic!("row {r:?}");
                };
                out.extend_from_slice(format!("{first} {name} {i} {s}\n").as_bytes());
            };
            let mut expected = Vec::new();
            for (i, r) in plain(&t, &names, 0..n).iter().enumerate() {
                line(i == 0, r, &mut expected);
            }
            let mut got = Vec::new();
            let r = t.format_rows(
                &names,
                |first, r, _: &mut (), out| line(first, r, out),
                |b| -> Result<(), ()> {
                    got.extend_from_slice(b);
                    Ok(())
                },
            );
            assert_eq!(r, Ok(()));
            assert!(got == expected, "{n} rows");
        }
        let (t, names) = numbered(CHUNK_ROWS * CHUNKS_PER_ROUND * 3);
        let mut parts = 0;
        let r = t.format_rows(
            &names,
            |_, _, _: &mut (), out| out.push(b'x'),
            |_| {
                parts += 1;
                Err("stop")
            },
        );
        assert_eq!((r, parts), (Err("stop"), 1));
    }

    #[test]
    fn rounds_half_away_from_zero() {
        assert_eq!(round1(12.25), 12.3);
        assert_eq!(round1(-12.25), -12.3);
        assert_eq!(round1(0.04), 0.0);
    }
}
