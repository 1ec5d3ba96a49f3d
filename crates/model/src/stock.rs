//! The NVTX text that stock PyTorch writes for each operator
//! (`torch.autograd.profiler.emit_nvtx`, `nsys --pytorch=autograd-nvtx`):
//!
//! ```text
//! NAME [", seq = " N] [", op_id = " M] [", sizes = " [[d, …], …]] [", input_op_ids = " [(id,out), …]]
//! ```
//!
//! plus the older spellings `NAME, seq=N` and `NAME, stashed seq=N`, and one
//! field of rprof's own, `, dtypes = ['float', 'c10::Half', …]`, which the
//! Kineto reader appends from the profiler's `Input type` (NVTX markers carry
//! no dtypes).
//! Fields are stripped right to left so that commas inside NAME are harmless
//! (pyprof-semantics.md §10.1). Parsing never fails: text that carries none
//! of the fields is a marker with only a name.

/// One parsed operator marker. Borrows from the text.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct StockMarker<'a> {
    /// Operator or node name (`aten::addmm`, `AddmmBackward0`, `layer:x`).
    pub name: &'a str,
    /// Autograd sequence number.
    pub seq: Option<i64>,
    /// True for the old `stashed seq=` form.
    pub stashed: bool,
    /// RecordFunction handle (PyTorch 2.x).
    pub op_id: Option<i64>,
    /// Input shapes, one per input; `[]` for scalars and non-tensors.
    /// `None` when the marker has no `sizes` field; `Some(Err)` text kept
    /// raw when the field is there but malformed.
    pub sizes: Option<Vec<Vec<i64>>>,
    /// `(producer op_id, output index)` per input.
    pub input_op_ids: Option<Vec<(i64, i64)>>,
    /// Input dtypes as the PyTorch profiler names them (`float`,
    /// `c10::Half`, `Scalar`, `""` for non-tensors); Kineto input only.
    pub dtypes: Option<Vec<&'a str>>,
    /// True when a `sizes` / `input_op_ids` field was present but could not
    /// be read (kept as an "other" detail, never an error).
    pub malformed: bool,
}

impl StockMarker<'_> {
    /// True for autograd backward nodes: `…Backward`, `…Backward0`,
    /// `…Backward12`, `…_backward`.
    pub fn is_backward_node(&self) -> bool {
        is_backward_name(self.name)
    }
}

impl<'a> StockMarker<'a> {
    /// Its name, sequence number and op id.
    pub fn head(&self) -> Head<'a> {
        Head {
            name: self.name,
            seq: self.seq,
            op_id: self.op_id,
        }
    }
}

/// [`parse_head`] of a marker whose name is known to be its first
/// `name_len` bytes: the text rprof printed for a PyTorch-profiler operator
/// (its name as the profiler gave it, then rprof's own fields). The name
/// is taken whole, never read for fields, so an operator or annotation
/// named `x, seq = 5` keeps its name and has no sequence number. A length
/// that does not fit the text falls back to [`parse_head`].
pub fn parse_head_split(text: &str, name_len: usize) -> Head<'_> {
    read_split(text, name_len, parse_head, |h, name| Head { name, ..h })
}

/// [`parse`] of a marker whose name is its first `name_len` bytes (see
/// [`parse_head_split`]).
pub fn parse_split(text: &str, name_len: usize) -> StockMarker<'_> {
    read_split(text, name_len, parse, |m, name| StockMarker { name, ..m })
}

/// `read` of the fields after the first `name_len` bytes, then `named`
/// gives it those bytes as its name; `read` of the whole text when the
/// length does not fit it.
fn read_split<'a, T>(
    text: &'a str,
    name_len: usize,
    read: impl Fn(&'a str) -> T,
    named: impl FnOnce(T, &'a str) -> T,
) -> T {
    if text.is_char_boundary(name_len) {
        let (name, fields) = text.split_at(name_len);
        named(read(fields), name)
    } else {
        read(text)
    }
}

/// True when `name` names a backward node (`Backward` + optional digits at
/// the end, or `_backward`).
pub fn is_backward_name(name: &str) -> bool {
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit());
    trimmed.ends_with("Backward") || trimmed.ends_with("backward")
}

/// Name, sequence number and op id of a marker text, without reading its
/// `sizes`/`input_op_ids`/`dtypes` groups (no allocation): what
/// classification needs, per kernel and per enclosing range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Head<'a> {
    /// Operator or node name.
    pub name: &'a str,
    /// Autograd sequence number.
    pub seq: Option<i64>,
    /// RecordFunction handle.
    pub op_id: Option<i64>,
}

/// See [`Head`].
pub fn parse_head(text: &str) -> Head<'_> {
    let mut rest = strip_groups(text, |_, _| {});
    let mut h = Head::default();
    if let Some((head, n)) = strip_int(rest, ", op_id = ") {
        h.op_id = Some(n);
        rest = head;
    }
    if let Some((head, n, _)) = strip_seq(rest) {
        h.seq = Some(n);
        rest = head;
    }
    h.name = rest;
    h
}

/// Parse a marker text.
pub fn parse(text: &str) -> StockMarker<'_> {
    let mut m = StockMarker::default();
    let mut rest = strip_groups(text, |key, group| match key {
        GroupKey::Dtypes => match parse_quoted_list(group) {
            Some(d) => m.dtypes = Some(d),
            None => m.malformed = true,
        },
        GroupKey::InputOpIds => match parse_pairs(group) {
            Some(p) => m.input_op_ids = Some(p),
            None => m.malformed = true,
        },
        GroupKey::Sizes => match parse_shapes(group) {
            Some(s) => m.sizes = Some(s),
            None => m.malformed = true,
        },
    });
    if let Some((head, n)) = strip_int(rest, ", op_id = ") {
        m.op_id = Some(n);
        rest = head;
    }
    if let Some((head, n, stashed)) = strip_seq(rest) {
        m.seq = Some(n);
        m.stashed = stashed;
        rest = head;
    }
    m.name = rest;
    m
}

/// The bracketed groups PyTorch appends to a marker text, in the order
/// they are taken off its end.
#[derive(Clone, Copy)]
enum GroupKey {
    Dtypes,
    InputOpIds,
    Sizes,
}

/// The groups' keys, in the order they are taken off a text's end.
const GROUP_KEYS: [(GroupKey, &str); 3] = [
    (GroupKey::Dtypes, ", dtypes = "),
    (GroupKey::InputOpIds, ", input_op_ids = "),
    (GroupKey::Sizes, ", sizes = "),
];

/// `text` without the groups of [`GROUP_KEYS`] it ends with, each handed
/// to `found` as it is taken off (`, dtypes = […]` first, if last in the
/// text, then `, input_op_ids = […]`, then `, sizes = […]`). The text's
/// last group is found once and then matched against each key in turn:
/// looking for it once per key walked a long `sizes` group three times.
fn strip_groups<'a>(text: &'a str, mut found: impl FnMut(GroupKey, &'a str)) -> &'a str {
    let mut rest = text;
    let mut last = last_group(rest);
    for (key, prefix) in GROUP_KEYS {
        if let Some((before, group)) = last
            && let Some(head) = before.strip_suffix(prefix)
        {
            found(key, group);
            rest = head;
            last = last_group(rest);
        }
    }
    rest
}

/// The bracket-balanced `[…]` group `text` ends with: the text before it,
/// and the group.
fn last_group(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    if bytes.last() != Some(&b']') {
        return None;
    }
    let mut depth = 0i32;
    let mut open = None;
    for (i, &b) in bytes.iter().enumerate().rev() {
        match b {
            b']' => depth += 1,
            b'[' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open?;
    Some((text.get(..open)?, text.get(open..)?))
}

/// The text before the integer `text` ends with, and the integer's digits
/// (and minus signs) as written, not yet parsed.
fn int_tail(text: &str) -> Option<(&str, &str)> {
    let start = text
        .bytes()
        .rposition(|b| !(b.is_ascii_digit() || b == b'-'))
        .map_or(0, |p| p + 1);
    Some((text.get(..start)?, text.get(start..)?))
}

/// `text` without its trailing `key` and integer, and the integer. The key
/// is matched before the digits are parsed: most texts end with no key.
fn strip_int<'a>(text: &'a str, key: &str) -> Option<(&'a str, i64)> {
    let (before, digits) = int_tail(text)?;
    let head = before.strip_suffix(key)?;
    Some((head, digits.parse().ok()?))
}

/// `text` without its trailing sequence number (`, seq = N`, `, stashed
/// seq=N` or `, seq=N`), the number, and whether it was stashed: the
/// integer found once for the three keys.
fn strip_seq(text: &str) -> Option<(&str, i64, bool)> {
    let (before, digits) = int_tail(text)?;
    let (head, stashed) = if let Some(h) = before.strip_suffix(", seq = ") {
        (h, false)
    } else if let Some(h) = before.strip_suffix(", stashed seq=") {
        (h, true)
    } else {
        (before.strip_suffix(", seq=")?, false)
    };
    Some((head, digits.parse().ok()?, stashed))
}

/// `[[32, 512], [], [1024]]`
pub fn parse_shapes(s: &str) -> Option<Vec<Vec<i64>>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    let mut rest = inner;
    loop {
        rest = rest.trim_start();
        let r = rest.strip_prefix('[')?;
        let close = r.find(']')?;
        let dims = r[..close].trim();
        let shape = if dims.is_empty() {
            Vec::new()
        } else {
            dims.split(',')
                .map(|d| d.trim().parse::<i64>().ok())
                .collect::<Option<Vec<_>>>()?
        };
        out.push(shape);
        rest = r[close + 1..].trim_start();
        if rest.is_empty() {
            return Some(out);
        }
        rest = rest.strip_prefix(',')?;
    }
}

/// `['float', 'Scalar', '']` (no escapes inside the quotes).
fn parse_quoted_list(s: &str) -> Option<Vec<&str>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
    let mut out = Vec::new();
    let mut rest = inner;
    while !rest.is_empty() {
        let r = rest.strip_prefix('\'')?;
        let close = r.find('\'')?;
        out.push(&r[..close]);
        rest = r[close + 1..].trim_start();
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start();
        } else if !rest.is_empty() {
            return None;
        }
    }
    Some(out)
}

/// A PyTorch-profiler type name as a marker's `dtypes` field holds it:
/// quotes and brackets never occur in PyTorch type names, and are dropped
/// rather than break the grammar (so the text reads back to this).
pub fn marker_dtype(d: &str) -> std::borrow::Cow<'_, str> {
    if d.contains(['\'', '[', ']']) {
        std::borrow::Cow::Owned(
            d.chars()
                .filter(|c| !matches!(c, '\'' | '[' | ']'))
                .collect(),
        )
    } else {
        std::borrow::Cow::Borrowed(d)
    }
}

/// Write the marker text for an operator in rprof's grammar (used for
/// Kineto operators): name, then the fields that are present.
pub fn format_marker(
    name: &str,
    seq: Option<i64>,
    op_id: Option<i64>,
    sizes: Option<&[Vec<i64>]>,
    dtypes: Option<&[impl AsRef<str>]>,
) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(name);
    if let Some(q) = seq {
        let _ = write!(s, ", seq = {q}");
    }
    if let Some(id) = op_id {
        let _ = write!(s, ", op_id = {id}");
    }
    if let Some(sizes) = sizes {
        s.push_str(", sizes = [");
        for (i, shape) in sizes.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            s.push('[');
            for (j, d) in shape.iter().enumerate() {
                if j > 0 {
                    s.push_str(", ");
                }
                let _ = write!(s, "{d}");
            }
            s.push(']');
        }
        s.push(']');
    }
    if let Some(dtypes) = dtypes {
        s.push_str(", dtypes = [");
        for (i, d) in dtypes.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            s.push('\'');
            s.push_str(&marker_dtype(d.as_ref()));
            s.push('\'');
        }
        s.push(']');
    }
    s
}

/// `[(0,-1), (30,0)]`
fn parse_pairs(s: &str) -> Option<Vec<(i64, i64)>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    let mut rest = inner;
    loop {
        rest = rest.trim_start();
        let r = rest.strip_prefix('(')?;
        let close = r.find(')')?;
        let (a, b) = r[..close].split_once(',')?;
        out.push((a.trim().parse().ok()?, b.trim().parse().ok()?));
        rest = r[close + 1..].trim_start();
        if rest.is_empty() {
            return Some(out);
        }
        rest = rest.strip_prefix(',')?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_2x_marker() {
        let m = parse(
            "aten::addmm, seq = 12, op_id = 34, sizes = [[1024], [32, 512], [512, 1024], [], []], input_op_ids = [(0,-1), (30,0), (33,0), (0,-1), (0,-1)]",
        );
        assert_eq!(m.name, "aten::addmm");
        assert_eq!(m.seq, Some(12));
        assert_eq!(m.op_id, Some(34));
        assert_eq!(
            m.sizes,
            Some(vec![
                vec![1024],
                vec![32, 512],
                vec![512, 1024],
                vec![],
                vec![]
            ])
        );
        assert_eq!(m.input_op_ids.as_ref().map(Vec::len), Some(5));
        assert!(!m.malformed);
    }

    #[test]
    fn versions_and_spellings() {
        let m = parse("aten::view, op_id = 314290");
        assert_eq!((m.name, m.seq, m.op_id), ("aten::view", None, Some(314290)));
        let m = parse("AddBackward0, seq = 103");
        assert_eq!((m.name, m.seq), ("AddBackward0", Some(103)));
        assert!(m.is_backward_node());
        let m = parse("AddmmBackward, stashed seq=7");
        assert_eq!((m.name, m.seq, m.stashed), ("AddmmBackward", Some(7), true));
        let m = parse("mm, seq=3");
        assert_eq!((m.name, m.seq), ("mm", Some(3)));
        let m = parse("FSDP::post_forward (encoder.block.0), op_id = 5");
        assert_eq!(m.name, "FSDP::post_forward (encoder.block.0)");
        let m = parse("{'traceMarker': ['a.py:1']}");
        assert_eq!(m.name, "{'traceMarker': ['a.py:1']}");
        assert_eq!(m.seq, None);
        // the 1.3–1.8 bug: no name before the sizes
        let m = parse(", sizes = [[2, 3]]");
        assert_eq!(m.name, "");
        assert_eq!(m.sizes, Some(vec![vec![2, 3]]));
    }

    #[test]
    fn malformed_fields_do_not_fail() {
        let m = parse("aten::mm, seq = 1, sizes = [[a, b]]");
        assert!(m.malformed);
        assert_eq!(m.seq, Some(1));
        let m = parse("weird, seq = x");
        assert_eq!((m.name, m.seq), ("weird, seq = x", None));
        assert_eq!(parse("").name, "");
        assert_eq!(parse("]]]").name, "]]]");
    }

    #[test]
    fn kineto_dtypes_round_trip() {
        let text = format_marker(
            "aten::addmm",
            Some(5),
            Some(9),
            Some(&[vec![1024], vec![32, 512], vec![]]),
            Some(&["c10::Half".to_owned(), "float".to_owned(), String::new()]),
        );
        assert_eq!(
            text,
            "aten::addmm, seq = 5, op_id = 9, sizes = [[1024], [32, 512], []], dtypes = ['c10::Half', 'float', '']"
        );
        let m = parse(&text);
        assert_eq!((m.name, m.seq, m.op_id), ("aten::addmm", Some(5), Some(9)));
        assert_eq!(m.sizes, Some(vec![vec![1024], vec![32, 512], vec![]]));
        assert_eq!(m.dtypes, Some(vec!["c10::Half", "float", ""]));
        assert!(parse("x, dtypes = [float]").malformed);
    }

    #[test]
    fn backward_names() {
        for n in [
            "AddmmBackward0",
            "MulBackward1",
            "LogSoftmaxBackward",
            "aten::cudnn_convolution_backward",
            "CheckpointFunctionBackward",
        ] {
            assert!(is_backward_name(n), "{n}");
        }
        for n in [
            "aten::addmm",
            "Backwardx",
            "autograd::engine::evaluate_function: AddmmBackward0x",
        ] {
            assert!(!is_backward_name(n), "{n}");
        }
    }

    /// The definition [`strip_groups`] keeps: each key's group looked for
    /// in turn, from the end of what the keys before left.
    fn strip_groups_by_key(text: &str) -> (&str, Vec<(usize, &str)>) {
        let mut rest = text;
        let mut found = Vec::new();
        for (i, (_, key)) in GROUP_KEYS.iter().enumerate() {
            if let Some((before, group)) = last_group(rest)
                && let Some(head) = before.strip_suffix(key)
            {
                found.push((i, group));
                rest = head;
            }
        }
        (rest, found)
    }

    proptest::proptest! {
        /// Taking the groups off with the last group found once gives what
        /// looking for it once per key gives, on texts made of the keys,
        /// brackets and other text in any order.
        #[test]
        fn groups_found_once_as_once_per_key(
            s in "(, dtypes = |, input_op_ids = |, sizes = |\\[|\\]|\\[\\[1, 2\\]\\]|\\['f'\\]|[a-z, =0-9]|é){0,16}",
        ) {
            let mut found = Vec::new();
            let rest = strip_groups(&s, |key, group| found.push((key as usize, group)));
            proptest::prop_assert_eq!((rest, found), strip_groups_by_key(&s));
        }

        #[test]
        fn never_panics(s in "\\PC{0,60}") {
            let _ = parse(&s);
        }

        /// The head is what the full parse says of any text, read whole or
        /// with a name length: the op models take a stack entry's head from
        /// the build's decoded marker (a profile) or from the text (a
        /// records file), and both must answer alike.
        #[test]
        fn head_agrees_with_full_parse_on_any_text(
            s in "(\\PC|, seq = |, op_id = |, stashed seq=|, seq=|, sizes = |[0-9-]){0,14}",
        ) {
            let full = parse(&s);
            proptest::prop_assert_eq!(full.head(), parse_head(&s));
            // and with a name length, fitting the text or not
            for n in [0, 1, 3, s.len() / 2, s.len(), s.len() + 1] {
                proptest::prop_assert_eq!(parse_split(&s, n).head(), parse_head_split(&s, n));
            }
        }

        #[test]
        fn head_agrees_with_full_parse(
            name in "[a-z:_]{1,12}",
            seq in proptest::option::of(0i64..100),
            op in proptest::option::of(0i64..100),
            sizes in proptest::option::of(proptest::collection::vec(proptest::collection::vec(0i64..9, 0..3), 0..3)),
        ) {
            let mut t = name.clone();
            if let Some(q) = seq { t.push_str(&format!(", seq = {q}")); }
            if let Some(o) = op { t.push_str(&format!(", op_id = {o}")); }
            if let Some(sz) = &sizes {
                t.push_str(&format!(", sizes = {sz:?}"));
            }
            let full = parse(&t);
            let head = parse_head(&t);
            proptest::prop_assert_eq!((full.name, full.seq, full.op_id), (head.name, head.seq, head.op_id));
            proptest::prop_assert_eq!(full.sizes, sizes);
        }

        /// An operator's text as the Kineto reader prints it, read with
        /// its name's length: the name comes back whole whatever it holds
        /// (`, seq = 5`, brackets, commas), and the fields come back as
        /// given.
        #[test]
        fn split_reads_any_name_and_the_fields(
            name in "(\\PC|, seq = 5|, op_id = 2|, sizes = \\[\\[1\\]\\]){0,6}",
            seq in proptest::option::of(-5i64..100),
            op in proptest::option::of(0i64..100),
            sizes in proptest::option::of(proptest::collection::vec(proptest::collection::vec(0i64..9, 0..3), 0..3)),
            dtypes in proptest::option::of(proptest::collection::vec("[a-zA-Z:0-9 ]{0,8}", 0..3)),
        ) {
            let text = format_marker(&name, seq, op, sizes.as_deref(), dtypes.as_deref());
            let m = parse_split(&text, name.len());
            proptest::prop_assert_eq!(m.name, name.as_str());
            proptest::prop_assert_eq!((m.seq, m.op_id), (seq, op));
            proptest::prop_assert_eq!(&m.sizes, &sizes);
            let want: Option<Vec<&str>> = dtypes.as_ref().map(|d| d.iter().map(String::as_str).collect());
            proptest::prop_assert_eq!(&m.dtypes, &want);
            proptest::prop_assert!(!m.malformed);
            proptest::prop_assert_eq!(parse_head_split(&text, name.len()), m.head());
        }
    }
}
