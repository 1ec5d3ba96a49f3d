//! Renumbering of PyTorch NVTX marker texts.
//!
//! PyTorch 2.x `emit_nvtx` writes `aten::addmm, seq = 47890, op_id = 1000497`.
//! In a real long run both numbers only grow, so every copy of an iteration
//! gets them shifted by a per-copy offset and all texts stay distinct.

/// The fields whose decimal numbers are renumbered.
pub const SEQ: &str = "seq = ";
/// See [`SEQ`].
pub const OP_ID: &str = "op_id = ";

/// The numbers that follow `field` in `text`, with their byte ranges.
fn numbers<'a>(text: &'a str, field: &'a str) -> impl Iterator<Item = (usize, usize, i64)> + 'a {
    text.match_indices(field).filter_map(move |(at, f)| {
        let from = at + f.len();
        let len = text[from..]
            .bytes()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let n = text.get(from..from + len)?.parse::<i64>().ok()?;
        Some((from, from + len, n))
    })
}

/// Smallest and largest number after `field` over all `texts`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    /// Smallest value seen.
    pub min: i64,
    /// Largest value seen.
    pub max: i64,
    /// False until a value was seen.
    pub seen: bool,
}

impl Span {
    /// Widen the span to cover `n`.
    pub fn add(&mut self, n: i64) {
        if self.seen {
            self.min = self.min.min(n);
            self.max = self.max.max(n);
        } else {
            *self = Span {
                min: n,
                max: n,
                seen: true,
            };
        }
    }

    /// `max - min + 1`: the shift per copy that keeps copies disjoint; 0
    /// when nothing was seen.
    pub fn step(&self) -> i64 {
        if self.seen {
            self.max - self.min + 1
        } else {
            0
        }
    }
}

/// Widen `seq` and `op_id` by the numbers in `text`.
pub fn scan(text: &str, seq: &mut Span, op_id: &mut Span) {
    for (_, _, n) in numbers(text, SEQ) {
        seq.add(n);
    }
    for (_, _, n) in numbers(text, OP_ID) {
        op_id.add(n);
    }
}

/// `text` with `seq_off` added to every `seq = N` and `op_id_off` to every
/// `op_id = M`; `None` when the text has neither field.
pub fn shift(text: &str, seq_off: i64, op_id_off: i64) -> Option<String> {
    let mut edits: Vec<(usize, usize, i64)> = numbers(text, SEQ)
        .map(|(a, b, n)| (a, b, n + seq_off))
        .chain(numbers(text, OP_ID).map(|(a, b, n)| (a, b, n + op_id_off)))
        .collect();
    if edits.is_empty() {
        return None;
    }
    edits.sort_unstable();
    let mut out = String::with_capacity(text.len() + 8);
    let mut pos = 0;
    for (a, b, n) in edits {
        out.push_str(&text[pos..a]);
        out.push_str(&n.to_string());
        pos = b;
    }
    out.push_str(&text[pos..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_both_fields() {
        assert_eq!(
            shift("aten::addmm, seq = 47890, op_id = 1000497", 10, 1000).as_deref(),
            Some("aten::addmm, seq = 47900, op_id = 1001497")
        );
        assert_eq!(
            shift("aten::empty, op_id = 994053", 10, 7).as_deref(),
            Some("aten::empty, op_id = 994060")
        );
        assert_eq!(
            shift("FSDP::post_forward (encoder.block.0), op_id = 5", 1, 1).as_deref(),
            Some("FSDP::post_forward (encoder.block.0), op_id = 6")
        );
        assert_eq!(shift("ncclSend", 1, 1), None);
        // `input_op_ids = ` is not `op_id = `
        assert_eq!(
            shift("x, seq = 1, input_op_ids = [(3, 0)]", 5, 100).as_deref(),
            Some("x, seq = 6, input_op_ids = [(3, 0)]")
        );
        // no digits after the field: left alone
        assert_eq!(shift("x, seq = ?", 5, 5), None);
    }

    #[test]
    fn spans() {
        let (mut s, mut o) = (Span::default(), Span::default());
        assert_eq!(s.step(), 0);
        scan("a, seq = 5, op_id = 100", &mut s, &mut o);
        scan("b, seq = 9", &mut s, &mut o);
        scan("c, op_id = 90", &mut s, &mut o);
        assert_eq!((s.min, s.max, s.step()), (5, 9, 5));
        assert_eq!((o.min, o.max, o.step()), (90, 100, 11));
    }
}
